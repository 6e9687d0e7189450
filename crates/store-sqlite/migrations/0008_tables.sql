-- Tables and the floor (API v1.1): each table created once, with the
-- permanent code of its QR card. A table's active session is the one whose
-- label is its name (one active session per label already).
create table tables (
    shop_id text not null references shops (shop_id),
    table_id text not null,
    name text not null,
    code text not null unique,
    created_at integer not null,
    primary key (shop_id, table_id),
    unique (shop_id, name)
) strict;
