-- On Citus, the shop of each session and order, found by the session's or
-- order's id alone: guest URLs name only a session, staff status changes
-- only an order. It is distributed by that id, colocated with the shops,
-- and new ids are drawn so that their route row shares the shop's shard
-- (src/shards.rs): a guest's request finds its shop on the shop's worker.
-- PostgreSQL alone finds them through their own ids' indexes and keeps no
-- routes; ordergate_distribute() files those of the rows there are.
create table shop_routes (
    id uuid primary key,
    shop_id uuid not null
);

-- Spreads this schema over a Citus cluster by shop: accounts and their
-- tokens are the platform's, on every node (reference tables); everything
-- else is hashed by shop_id, colocated with shops, so each shop's rows of
-- every table share one shard; routes are hashed by their own id in the
-- same colocation group. Tables already distributed are left as they are,
-- so it can run again: the migrations call it on a database that has
-- Citus, and `ordergate distribute` on one that got Citus after it was
-- migrated. Citus distributes a table only while no local table has a
-- foreign key to it, so the foreign keys of the tables it distributes are
-- set aside meanwhile and made again on the distributed tables. Then the
-- sessions and orders there are get their routes. Returns how many tables
-- it distributed.
create function ordergate_distribute() returns integer
language plpgsql as $$
declare
    reference text[] := array['accounts', 'staff_tokens', 'login_attempts'];
    shop_owned text[] := array[
        'tables', 'images', 'menu_items', 'toppings', 'item_options', 'inventory',
        'inventory_log', 'table_sessions', 'orders', 'service_requests',
        'ticket_counters', 'event_counters', 'events', 'printers', 'memberships',
        'devices', 'idempotency_keys', 'guest_tokens', 'audit_log'];
    local_tables text[];
    local_ids oid[];
    foreign_keys text[];
    name text;
    statement text;
begin
    if not exists (select from pg_extension where extname = 'citus') then
        raise exception 'the citus extension is not in this database'
            using hint = 'create extension citus, and add the workers, first';
    end if;
    select coalesce(array_agg(t order by n), '{}') into local_tables
    from unnest(reference || array['shops'] || shop_owned || array['shop_routes'])
             with ordinality as listed(t, n)
    where not exists (select from pg_dist_partition where logicalrelid = t::regclass);
    if cardinality(local_tables) = 0 then
        return 0;
    end if;
    select array_agg(t::regclass::oid) into local_ids from unnest(local_tables) as t;
    -- Foreign keys to reference tables need one connection per node
    -- throughout the transaction.
    perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
    select coalesce(array_agg(format('alter table %s add constraint %I %s',
                                     conrelid::regclass, conname, pg_get_constraintdef(oid))), '{}')
    into foreign_keys
    from pg_constraint
    where contype = 'f' and (conrelid = any(local_ids) or confrelid = any(local_ids));
    for statement in
        select format('alter table %s drop constraint %I', conrelid::regclass, conname)
        from pg_constraint
        where contype = 'f' and (conrelid = any(local_ids) or confrelid = any(local_ids))
    loop
        execute statement;
    end loop;
    foreach name in array local_tables loop
        if name = any(reference) then
            perform create_reference_table(name::regclass);
        elsif name = 'shops' then
            perform create_distributed_table('shops', 'shop_id');
        elsif name = 'shop_routes' then
            perform create_distributed_table('shop_routes', 'id', colocate_with => 'shops');
        else
            perform create_distributed_table(name::regclass, 'shop_id', colocate_with => 'shops');
        end if;
    end loop;
    -- Citus copied the rows into the shards; the coordinator's own copy of
    -- them would only take space.
    foreach name in array local_tables loop
        perform truncate_local_data_after_distributing_table(name::regclass);
    end loop;
    foreach statement in array foreign_keys loop
        execute statement;
    end loop;
    insert into shop_routes (id, shop_id)
    select session_id, shop_id from table_sessions
    on conflict (id) do nothing;
    insert into shop_routes (id, shop_id)
    select order_id, shop_id from orders
    on conflict (id) do nothing;
    return cardinality(local_tables);
end
$$;

do $$
begin
    if exists (select from pg_extension where extname = 'citus') then
        perform ordergate_distribute();
    end if;
end
$$;
