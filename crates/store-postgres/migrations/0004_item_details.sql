-- Menus restaurants run (API v1.1): what an item declares besides its name
-- and price (allergens, tags, its kitchen station), as one JSON object, so
-- details to come need no new column. Existing items declare nothing.
alter table menu_items add column details text not null default '{}';
