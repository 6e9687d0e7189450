-- The guest rules that look back at one client's orders (same payload,
-- cooldown) now read only a window of recent orders, which the session's
-- own index (orders_by_session: session_id, created_at) finds. This index
-- cost every order an entry at its client's place in it: a leaf per client
-- in each commit's WAL, where the other indexes append.
drop index orders_by_client;
