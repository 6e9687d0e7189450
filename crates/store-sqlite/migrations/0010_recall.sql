-- Recall (the kitchen's undo of a mistaken bump): an order's last advance
-- along the kitchen's path, while a recall may still undo it. A cancel, a
-- recall, and every order placed before this leave both null.
alter table orders add column last_move_from text
    check (last_move_from in ('placed', 'accepted', 'preparing', 'ready'));
alter table orders add column last_move_at integer;
