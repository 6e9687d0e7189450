-- Option groups (API v1.1): an item's groups, as JSON beside the item
-- (`[{groupId, name, minChoices, maxChoices, optionIds}]`), and each option
-- a row of its own, an inventory entry as a topping is.
alter table menu_items add column option_groups text not null default '[]';

create table item_options (
    shop_id text not null references shops (shop_id),
    option_id text not null,
    menu_item_id text not null, -- the item whose group offers it
    name text not null,
    price integer not null check (price >= 0),
    position integer not null, -- within its item, across its groups
    retired integer not null default 0,
    primary key (shop_id, option_id)
) strict;

create index item_options_by_item on item_options (shop_id, menu_item_id);

-- Inventory entries may be options now. SQLite changes a check constraint
-- only by building the table anew; migrations run with foreign keys off,
-- so inventory_log's rows keep pointing at the rebuilt table, and the
-- foreign key check after this migration proves they all still do.
create table inventory_next (
    shop_id text not null references shops (shop_id),
    item_id text not null,
    kind text not null check (kind in ('menuItem', 'topping', 'option')),
    stock integer check (stock is null or stock >= 0),
    marked_sold_out integer not null default 0,
    sold_out_until integer,
    version integer not null,
    updated_at integer not null,
    primary key (shop_id, item_id)
) strict;

insert into inventory_next (shop_id, item_id, kind, stock, marked_sold_out, sold_out_until,
                            version, updated_at)
select shop_id, item_id, kind, stock, marked_sold_out, sold_out_until, version, updated_at
from inventory;

drop table inventory;

alter table inventory_next rename to inventory;
