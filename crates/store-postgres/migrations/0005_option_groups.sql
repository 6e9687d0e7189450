-- Option groups (API v1.1): an item's groups, as JSON beside the item
-- (`[{groupId, name, minChoices, maxChoices, optionIds}]`), and each option
-- a row of its own, an inventory entry as a topping is.
alter table menu_items add column option_groups text not null default '[]';

create table item_options (
    shop_id uuid not null references shops (shop_id),
    option_id uuid not null,
    menu_item_id uuid not null, -- the item whose group offers it
    name text not null,
    price bigint not null check (price >= 0),
    position bigint not null, -- within its item, across its groups
    retired boolean not null default false,
    primary key (shop_id, option_id)
);

create index item_options_by_item on item_options (shop_id, menu_item_id);

alter table inventory drop constraint inventory_kind_check;
alter table inventory add constraint inventory_kind_check
    check (kind in ('menuItem', 'topping', 'option'));
