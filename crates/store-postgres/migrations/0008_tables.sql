-- Tables and the floor (API v1.1): each table created once, with the
-- permanent code of its QR card. A table's active session is the one whose
-- label is its name (one active session per label already).
create table tables (
    shop_id uuid not null references shops (shop_id),
    table_id uuid not null,
    name text not null,
    code text not null,
    created_at timestamptz not null,
    primary key (shop_id, table_id),
    constraint tables_name_key unique (shop_id, name)
);

-- A card names its table by code alone.
create unique index tables_by_code on tables (code);
