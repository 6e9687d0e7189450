-- Devices (API v1.1): a shop's kitchen displays and floor tablets, each a
-- long-lived credential in one role, kept as the digest of its token and
-- forgotten when revoked. Audit rows name the staff member or device that
-- placed a staff order.
create table devices (
    device_id text primary key,
    shop_id text not null references shops (shop_id),
    name text not null,
    role text not null check (role in ('floor', 'kitchen')),
    token_digest text not null unique,
    created_at integer not null
) strict;
create index devices_by_shop on devices (shop_id, created_at);

alter table audit_log add column actor text;
