-- Kitchen printers. Each prints from the shop's event log: `cursor_event_id`
-- is the last event it has dealt with (printed, or nothing for it), and
-- `sending_event_id` the ticket whose bytes were going out and may have
-- reached the printer without that being recorded: it is printed again
-- only marked as a possible repeat.
create table printers (
    shop_id uuid not null references shops (shop_id),
    printer_id uuid not null,
    name text not null,
    address text not null,
    station text,
    created_at timestamptz not null,
    cursor_event_id bigint not null,
    sending_event_id bigint,
    printed bigint not null default 0,
    last_printed_at timestamptz,
    last_error text,
    last_error_at timestamptz,
    primary key (shop_id, printer_id),
    constraint printers_name_key unique (shop_id, name)
);

create unique index printers_by_id on printers (printer_id);
