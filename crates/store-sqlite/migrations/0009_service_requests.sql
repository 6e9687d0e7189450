-- Service requests (API v1.1): a table calling for staff or asking for the
-- bill, open until staff acknowledge it. At most one open request of each
-- kind per session.
create table service_requests (
    shop_id text not null references shops (shop_id),
    request_id text not null,
    session_id text not null references table_sessions (session_id),
    table_label text not null,
    kind text not null check (kind in ('call', 'bill')),
    status text not null check (status in ('open', 'acknowledged')),
    created_at integer not null,
    acknowledged_at integer,
    primary key (shop_id, request_id)
) strict;

create unique index service_requests_one_open
    on service_requests (session_id, kind) where status = 'open';
create index service_requests_by_id on service_requests (request_id);
create index service_requests_by_shop on service_requests (shop_id, status, created_at);
