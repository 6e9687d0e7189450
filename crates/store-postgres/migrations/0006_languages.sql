-- Languages (API v1.1): the languages a shop writes its menu in (a JSON
-- array of BCP 47 tags, the default first), and every display text of the
-- catalog kept as JSON: a string, or an object of language → string. The
-- texts stored before are strings.
alter table shops add column languages text not null default '["en"]';

update menu_items
set name = to_json(name)::text, description = to_json(description)::text,
    category = to_json(category)::text;
update toppings set name = to_json(name)::text;
update item_options set name = to_json(name)::text;
