-- Languages (API v1.1): the languages a shop writes its menu in (a JSON
-- array of BCP 47 tags, the default first), and every display text of the
-- catalog kept as JSON: a string, or an object of language → string. The
-- texts stored before are strings.
alter table shops add column languages text not null default '["en"]';

update menu_items
set name = json_quote(name), description = json_quote(description),
    category = json_quote(category);
update toppings set name = json_quote(name);
update item_options set name = json_quote(name);
