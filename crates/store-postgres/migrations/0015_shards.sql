-- Every key of a shop's rows carries shop_id, so the schema can be spread
-- over the shards of a distributed PostgreSQL by shop: Citus requires each
-- primary key, unique constraint and foreign key of a distributed table to
-- include its distribution column. Ids that were unique on their own are
-- drawn at random (UUIDs, 80-bit table codes, digests of 256-bit tokens):
-- they keep an index for lookups by id, and their uniqueness rests on
-- their randomness as it always did in practice.

-- A key's record is filed under the shop its write touched. Records of
-- old releases' refusals may name none: the nil shop takes them.
update idempotency_keys set shop_id = '00000000-0000-0000-0000-000000000000'
where shop_id is null;
alter table idempotency_keys alter column shop_id set not null;
alter table idempotency_keys drop constraint idempotency_keys_pkey;
-- A scope names one shop (a session, or a staff path under one shop), so
-- this is still one live record per (scope, key); an expired record is
-- replaced under the same shop.
alter table idempotency_keys add primary key (shop_id, scope, idempotency_key);
create index idempotency_keys_by_key on idempotency_keys (scope, idempotency_key);

alter table orders drop constraint orders_session_id_fkey;
alter table guest_tokens drop constraint guest_tokens_session_id_fkey;
alter table service_requests drop constraint service_requests_session_id_fkey;
alter table table_sessions drop constraint table_sessions_pkey;
alter table table_sessions add primary key (shop_id, session_id);
create index table_sessions_by_id on table_sessions (session_id);
alter table orders add constraint orders_session_fkey
    foreign key (shop_id, session_id) references table_sessions (shop_id, session_id);
alter table guest_tokens add constraint guest_tokens_session_fkey
    foreign key (shop_id, session_id) references table_sessions (shop_id, session_id);
alter table service_requests add constraint service_requests_session_fkey
    foreign key (shop_id, session_id) references table_sessions (shop_id, session_id);

alter table orders drop constraint orders_pkey;
alter table orders add primary key (shop_id, order_id);
create index orders_by_id on orders (order_id);

alter table guest_tokens drop constraint guest_tokens_pkey;
alter table guest_tokens add primary key (shop_id, token_digest);
create index guest_tokens_by_digest on guest_tokens (token_digest);

drop index service_requests_one_open;
create unique index service_requests_one_open on service_requests (shop_id, session_id, kind)
    where status = 'open';

drop index tables_by_code;
create index tables_by_code on tables (code);

drop index printers_by_id;
create index printers_by_id on printers (printer_id);

alter table devices drop constraint devices_token_digest_key;
alter table devices drop constraint devices_pkey;
alter table devices add primary key (shop_id, device_id);
create index devices_by_id on devices (device_id);
create index devices_by_digest on devices (token_digest);

-- On Citus (its extension is in this database), distribute: accounts and
-- their tokens are the platform's, on every node; everything else by shop,
-- each shop's rows of every table on one shard. Citus distributes a table
-- only while no local table has a foreign key to it, so the foreign keys
-- are set aside while it does and made again on the distributed tables.
do $$
declare
    shop_owned text[] := array[
        'tables', 'images', 'menu_items', 'toppings', 'item_options', 'inventory',
        'inventory_log', 'table_sessions', 'orders', 'service_requests',
        'ticket_counters', 'event_counters', 'events', 'printers', 'memberships',
        'devices', 'idempotency_keys', 'guest_tokens', 'audit_log'];
    foreign_keys text[];
    name text;
    statement text;
begin
    if not exists (select from pg_extension where extname = 'citus') then
        return;
    end if;
    -- Foreign keys to reference tables need one connection per node
    -- throughout the transaction.
    perform set_config('citus.multi_shard_modify_mode', 'sequential', true);
    select coalesce(array_agg(format('alter table %s add constraint %I %s',
                                     conrelid::regclass, conname, pg_get_constraintdef(oid))), '{}')
    into foreign_keys
    from pg_constraint
    where contype = 'f' and connamespace = current_schema()::regnamespace;
    for statement in
        select format('alter table %s drop constraint %I', conrelid::regclass, conname)
        from pg_constraint
        where contype = 'f' and connamespace = current_schema()::regnamespace
    loop
        execute statement;
    end loop;
    perform create_reference_table('accounts');
    perform create_reference_table('staff_tokens');
    perform create_reference_table('login_attempts');
    perform create_distributed_table('shops', 'shop_id');
    foreach name in array shop_owned loop
        perform create_distributed_table(name::regclass, 'shop_id', colocate_with => 'shops');
    end loop;
    foreach statement in array foreign_keys loop
        execute statement;
    end loop;
end
$$;
