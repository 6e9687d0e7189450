-- Shops, catalog, inventory with its op log, table sessions and orders.
-- Every table carries shop_id: one shop's rows never need another shop's.
-- Times are unix milliseconds (UTC); ids are lowercase hyphenated UUID text.

create table shops (
    shop_id text primary key,
    name text not null,
    currency text not null,
    timezone text not null,
    catalog_version integer not null default 0,
    created_at integer not null
) strict;

create table menu_items (
    shop_id text not null references shops (shop_id),
    menu_item_id text not null,
    name text not null,
    description text not null,
    category text not null,
    price integer not null check (price >= 0),
    topping_ids text not null, -- JSON array of topping ids, in display order
    max_toppings integer not null,
    position integer not null,
    retired integer not null default 0,
    primary key (shop_id, menu_item_id)
) strict;

create table toppings (
    shop_id text not null references shops (shop_id),
    topping_id text not null,
    name text not null,
    price integer not null check (price >= 0),
    position integer not null,
    retired integer not null default 0,
    primary key (shop_id, topping_id)
) strict;

create table inventory (
    shop_id text not null references shops (shop_id),
    item_id text not null,
    kind text not null check (kind in ('menuItem', 'topping')),
    stock integer check (stock is null or stock >= 0),
    marked_sold_out integer not null default 0,
    sold_out_until integer,
    version integer not null,
    updated_at integer not null,
    primary key (shop_id, item_id)
) strict;

create table inventory_log (
    log_id integer primary key,
    shop_id text not null,
    item_id text not null,
    operation text not null check (operation in ('order', 'cancel', 'restock', 'set')),
    delta integer not null,
    stock_before integer,
    stock_after integer,
    order_id text,
    actor text not null,
    created_at integer not null,
    foreign key (shop_id, item_id) references inventory (shop_id, item_id)
) strict;

create index inventory_log_by_shop on inventory_log (shop_id, log_id);

create table table_sessions (
    session_id text primary key,
    shop_id text not null references shops (shop_id),
    table_label text not null,
    pin text not null,
    status text not null check (status in ('active', 'closed')),
    opened_at integer not null,
    closed_at integer,
    pin_failures integer not null default 0,
    pin_locked_until integer
) strict;

-- One active session per table; closed ones pile up as history.
create unique index table_sessions_one_active
    on table_sessions (shop_id, table_label) where status = 'active';
create index table_sessions_by_shop on table_sessions (shop_id, opened_at);

create table orders (
    order_id text primary key,
    shop_id text not null references shops (shop_id),
    session_id text not null references table_sessions (session_id),
    ticket_day text not null, -- the shop's local date the ticket number counts in
    ticket_number integer not null,
    status text not null,
    source text not null,
    client_id text,
    payload_hash text not null, -- digest of items and note, for the duplicate-payload rule
    lines text not null, -- JSON snapshot of the priced lines
    note text not null,
    total integer not null,
    version integer not null,
    created_at integer not null,
    updated_at integer not null,
    unique (shop_id, ticket_day, ticket_number)
) strict;

create index orders_by_session on orders (session_id, created_at);
-- The duplicate-payload and cooldown rules look back at one client's
-- recent orders in one session.
create index orders_by_client on orders (session_id, client_id, created_at);
