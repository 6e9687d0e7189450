-- Kitchen printers. Each prints from the shop's event log: `cursor_event_id`
-- is the last event it has dealt with (printed, or nothing for it), and
-- `sending_event_id` the ticket whose bytes were going out and may have
-- reached the printer without that being recorded: it is printed again
-- only marked as a possible repeat.
create table printers (
    shop_id text not null references shops (shop_id),
    printer_id text not null unique,
    name text not null,
    address text not null,
    station text,
    created_at integer not null,
    cursor_event_id integer not null,
    sending_event_id integer,
    printed integer not null default 0,
    last_printed_at integer,
    last_error text,
    last_error_at integer,
    primary key (shop_id, printer_id),
    unique (shop_id, name)
) strict;
