-- Shops, catalog, inventory with its op log, table sessions and orders: the
-- tables and columns of the SQLite backend, in PostgreSQL's types. Every
-- table carries shop_id: one shop's rows never need another shop's, so
-- shops can be spread over shards with shop_id as the distribution column.
-- Times are timestamptz (written millisecond-truncated); ids are uuid;
-- JSON (lines, topping ids) is kept as text, byte for byte.

create table shops (
    shop_id uuid primary key,
    name text not null,
    currency text not null,
    timezone text not null,
    catalog_version bigint not null default 0,
    created_at timestamptz not null
);

create table menu_items (
    shop_id uuid not null references shops (shop_id),
    menu_item_id uuid not null,
    name text not null,
    description text not null,
    category text not null,
    price bigint not null check (price >= 0),
    topping_ids text not null, -- JSON array of topping ids, in display order
    max_toppings bigint not null,
    position bigint not null,
    retired boolean not null default false,
    primary key (shop_id, menu_item_id)
);

create table toppings (
    shop_id uuid not null references shops (shop_id),
    topping_id uuid not null,
    name text not null,
    price bigint not null check (price >= 0),
    position bigint not null,
    retired boolean not null default false,
    primary key (shop_id, topping_id)
);

create table inventory (
    shop_id uuid not null references shops (shop_id),
    item_id uuid not null,
    kind text not null check (kind in ('menuItem', 'topping')),
    stock bigint check (stock is null or stock >= 0),
    marked_sold_out boolean not null default false,
    sold_out_until timestamptz,
    version bigint not null,
    updated_at timestamptz not null,
    primary key (shop_id, item_id)
);

create table inventory_log (
    log_id bigint generated always as identity,
    shop_id uuid not null,
    item_id uuid not null,
    operation text not null check (operation in ('order', 'cancel', 'restock', 'set')),
    delta bigint not null,
    stock_before bigint,
    stock_after bigint,
    order_id uuid,
    actor text not null,
    created_at timestamptz not null,
    primary key (shop_id, log_id),
    foreign key (shop_id, item_id) references inventory (shop_id, item_id)
);

-- A cancellation looks up what its order took.
create index inventory_log_by_order on inventory_log (shop_id, order_id)
    where order_id is not null;

create table table_sessions (
    session_id uuid primary key,
    shop_id uuid not null references shops (shop_id),
    table_label text not null,
    pin text not null,
    status text not null check (status in ('active', 'closed')),
    opened_at timestamptz not null,
    closed_at timestamptz,
    pin_failures bigint not null default 0,
    pin_locked_until timestamptz,
    -- Insertion order, standing in for SQLite's rowid: it breaks ties
    -- between sessions opened at the same instant.
    seq bigint generated always as identity
);

-- One active session per table; closed ones pile up as history. Also what
-- makes the second of two concurrent opens of a free table fail.
create unique index table_sessions_one_active
    on table_sessions (shop_id, table_label) where status = 'active';
create index table_sessions_by_shop on table_sessions (shop_id, opened_at);

create table orders (
    order_id uuid primary key,
    shop_id uuid not null references shops (shop_id),
    session_id uuid not null references table_sessions (session_id),
    ticket_day text not null, -- the shop's local date the ticket number counts in
    ticket_number bigint not null,
    status text not null,
    source text not null,
    client_id text,
    payload_hash text not null, -- digest of items and note, for the duplicate-payload rule
    lines text not null, -- JSON snapshot of the priced lines
    note text not null,
    total bigint not null,
    version bigint not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    unique (shop_id, ticket_day, ticket_number)
);

create index orders_by_session on orders (session_id, created_at);
-- The duplicate-payload and cooldown rules look back at one client's
-- recent orders in one session.
create index orders_by_client on orders (session_id, client_id, created_at);
create index orders_by_shop on orders (shop_id, created_at);
