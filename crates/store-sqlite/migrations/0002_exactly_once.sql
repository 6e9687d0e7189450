-- The exactly-once order path: idempotency records, ticket counters, the
-- kitchen event log and the audit trail. Each is written in the same
-- transaction as the order it belongs to.

-- A completed request, kept to be replayed. A row exists only once its
-- outcome committed, so there is never a key without its response.
create table idempotency_keys (
    scope text not null, -- 'session:<id>' for guests, 'staff <METHOD> <path>' for staff
    idempotency_key text not null,
    shop_id text, -- null only for requests that create a shop
    fingerprint text not null,
    status integer not null,
    body text not null,
    location text,
    created_at integer not null,
    expires_at integer not null,
    primary key (scope, idempotency_key)
) strict;

create index idempotency_keys_by_expiry on idempotency_keys (expires_at);

create table ticket_counters (
    shop_id text not null references shops (shop_id),
    ticket_day text not null,
    last_number integer not null,
    primary key (shop_id, ticket_day)
) strict;

-- Append-only, ids strictly increasing per shop: kitchen displays resume
-- from the last id they saw.
create table events (
    shop_id text not null references shops (shop_id),
    event_id integer not null,
    event_type text not null,
    session_id text, -- the session an order event belongs to, for guest streams
    data text not null,
    created_at integer not null,
    primary key (shop_id, event_id)
) strict;

create table audit_log (
    audit_id integer primary key,
    shop_id text not null references shops (shop_id),
    session_id text not null,
    request_id text not null,
    client_id text,
    status integer not null,
    code text not null,
    idempotent_replay integer not null,
    order_id text,
    created_at integer not null
) strict;

create index audit_log_by_shop on audit_log (shop_id, audit_id);
