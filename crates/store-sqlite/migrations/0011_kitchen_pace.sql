-- The kitchen's pace: each shop's ticket age colours, and when the kitchen
-- took each order and had its food ready (the estimated wait guests see is
-- made of the last hour's). Orders from before are simply not counted.
alter table shops add column kitchen_warn_minutes integer not null default 5
    check (kitchen_warn_minutes between 1 and 240);
alter table shops add column kitchen_late_minutes integer not null default 10
    check (kitchen_late_minutes between 1 and 240);
alter table orders add column accepted_at integer;
alter table orders add column ready_at integer;
create index orders_ready_by_shop on orders (shop_id, ready_at) where ready_at is not null;
