-- The exactly-once order path: idempotency records, ticket and event
-- counters, the kitchen event log and the audit trail. Each is written in
-- the same transaction as the order it belongs to.

-- A completed request, kept to be replayed. A row exists only once its
-- outcome committed, so there is never a key without its response. Requests
-- with the same key take turns on an advisory lock of (scope, key).
create table idempotency_keys (
    scope text not null, -- 'session:<id>' for guests, 'staff <METHOD> <path>' for staff
    idempotency_key text not null,
    shop_id uuid, -- null only for requests that create a shop
    fingerprint text not null,
    status bigint not null,
    body text not null, -- the response body, byte for byte
    location text,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    primary key (scope, idempotency_key)
);

create index idempotency_keys_by_expiry on idempotency_keys (expires_at);

create table ticket_counters (
    shop_id uuid not null references shops (shop_id),
    ticket_day text not null,
    last_number bigint not null,
    primary key (shop_id, ticket_day)
);

-- The last event id of each shop. A writer increments its shop's row and
-- holds the row lock until it commits, so event ids are strictly
-- increasing per shop in commit order.
create table event_counters (
    shop_id uuid primary key references shops (shop_id),
    last_event_id bigint not null
);

-- Append-only, ids strictly increasing per shop: kitchen displays resume
-- from the last id they saw.
create table events (
    shop_id uuid not null references shops (shop_id),
    event_id bigint not null,
    event_type text not null,
    session_id uuid, -- the session an order event belongs to, for guest streams
    data text not null, -- JSON, byte for byte
    created_at timestamptz not null,
    primary key (shop_id, event_id)
);

create table audit_log (
    audit_id bigint generated always as identity,
    shop_id uuid not null references shops (shop_id),
    session_id uuid not null,
    request_id text not null,
    client_id text,
    status bigint not null,
    code text not null,
    idempotent_replay boolean not null,
    order_id uuid,
    created_at timestamptz not null,
    primary key (shop_id, audit_id)
);
