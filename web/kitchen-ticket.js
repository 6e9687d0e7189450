// Kitchen display: one ticket's card (its hooks are listed in kitchen.js).

import { h } from './console.js';

export const CANCELLABLE = new Set(['placed', 'accepted', 'preparing']);
export const NEXT = { placed: 'accepted', accepted: 'preparing', preparing: 'ready', ready: 'served' };
export const ADVANCE_LABEL = {
  placed: 'Accept',
  accepted: 'Start preparing',
  preparing: 'Mark ready',
  ready: 'Mark served',
};
export const STATUS_LABEL = {
  placed: 'New',
  accepted: 'Accepted',
  preparing: 'Preparing',
  ready: 'Ready',
  served: 'Served',
  cancelled: 'Cancelled',
};

/**
 * Fill `el` (an li.ticket, new or reused) with the card of `order`.
 * `shown(line)` tells which lines belong on this screen (the station);
 * `placedAt` is the title text of the age ("Placed at 12:04").
 */
export function fillTicket(el, order, { busy, error, shown, placedAt }) {
  const armed = el.querySelector('[data-armed=true]');
  const titleId = `ticket-${order.orderId}`;
  const next = NEXT[order.status];
  const lines = (order.items || []).map((line, i) => [line, i]).filter(([line]) => shown(line));
  const others = (order.items || []).length - lines.length;
  const content = [
    h(
      'header',
      { class: 'ticket-head' },
      h(
        'div',
        { class: 'ticket-head-row' },
        h('span', { class: 'ticket-key', 'aria-hidden': 'true' }),
        h(
          'h3',
          { class: 'ticket-title', id: titleId },
          h(
            'span',
            { class: 'ticket-number' },
            h('span', { class: 'visually-hidden', text: 'Ticket ' }),
            `#${order.ticketNumber}`,
          ),
          h(
            'span',
            { class: 'ticket-table' },
            h('span', { class: 'ticket-table-label', text: 'Table ' }),
            order.tableLabel,
          ),
          h('span', { class: 'visually-hidden', text: `, ${STATUS_LABEL[order.status]}` }),
        ),
        order.source === 'staff' ? h('span', { class: 'ticket-source', title: 'Staff order', text: 'Staff' }) : null,
      ),
      h(
        'div',
        { class: 'ticket-head-row' },
        h('span', { class: 'ticket-status', 'aria-hidden': 'true', text: STATUS_LABEL[order.status] }),
        h('time', { class: 'ticket-age', datetime: order.createdAt, title: placedAt }),
      ),
    ),
    h(
      'ul',
      { class: 'ticket-lines', 'aria-label': 'Items' },
      lines.map(([line, i]) =>
        h(
          'li',
          { dataset: { line: String(i), menuItemId: line.menuItemId } },
          h('span', { class: 'line-qty' }, `${line.quantity}×`),
          ' ',
          h('span', { class: 'line-name', text: line.name }),
          line.toppings && line.toppings.length
            ? h(
                'ul',
                { class: 'line-toppings', 'aria-label': `Toppings for ${line.name}` },
                line.toppings.map((t) => h('li', { dataset: { topping: t.toppingId } }, `+ ${t.name}`)),
              )
            : null,
          line.options && line.options.length
            ? h(
                'ul',
                { class: 'line-options', 'aria-label': `Choices for ${line.name}` },
                line.options.map((o) => h('li', { dataset: { option: o.optionId } }, o.name)),
              )
            : null,
          line.note ? h('p', { class: 'line-note', text: line.note }) : null,
        ),
      ),
    ),
    others
      ? h('p', {
          class: 'ticket-others',
          dataset: { otherLines: String(others) },
          text: `+ ${others} ${others === 1 ? 'item' : 'items'} for other stations`,
        })
      : null,
    order.note
      ? h('p', { class: 'ticket-note' }, h('span', { class: 'ticket-note-label', text: 'Note: ' }), order.note)
      : null,
    h(
      'div',
      { class: 'ticket-actions' },
      next
        ? h('button', {
            type: 'button',
            class: `btn btn-advance btn-to-${next}`,
            dataset: { action: 'advance', nextStatus: next },
            'aria-disabled': busy ? 'true' : null,
            'aria-label': `${ADVANCE_LABEL[order.status]}: ticket ${order.ticketNumber}, table ${order.tableLabel}`,
            text: busy ? 'Sending…' : ADVANCE_LABEL[order.status],
          })
        : null,
      CANCELLABLE.has(order.status)
        ? h('button', {
            type: 'button',
            class: 'btn btn-cancel',
            dataset: { action: 'cancel' },
            'aria-disabled': busy ? 'true' : null,
            'aria-label': `Cancel ticket ${order.ticketNumber}, table ${order.tableLabel}`,
            text: 'Cancel',
          })
        : null,
    ),
    h('p', { class: 'ticket-error', role: 'alert', dataset: { role: 'ticket-error' } }, error || ''),
  ];
  el.replaceChildren(...content.filter(Boolean));
  el.setAttribute('aria-labelledby', titleId);
  Object.assign(el.dataset, {
    orderId: order.orderId,
    status: order.status,
    version: String(order.version),
    ticketNumber: String(order.ticketNumber),
    table: order.tableLabel,
  });
  el.classList.toggle('is-staff', order.source === 'staff');
  if (busy) el.setAttribute('aria-busy', 'true');
  else el.removeAttribute('aria-busy');
  if (armed && !busy && CANCELLABLE.has(order.status)) armCancel(el.querySelector('[data-action=cancel]'), order);
  return el;
}

/** What a selection announces: "2 of 18: ticket 42, table T4, new, 3 min. Enter: accept." */
export function describeTicket(order, position, total, age) {
  const next = ADVANCE_LABEL[order.status];
  const status = STATUS_LABEL[order.status].toLowerCase();
  const then = next ? ` Enter: ${next.toLowerCase()}.` : '';
  return `${position} of ${total}: ticket ${order.ticketNumber}, table ${order.tableLabel}, ${status}, ${age}.${then}`;
}

/** Cancel needs a second press within 5 s. */
export function armCancel(button, order) {
  button.dataset.armed = 'true';
  button.textContent = 'Confirm cancel';
  button.setAttribute('aria-label', `Confirm: cancel ticket ${order.ticketNumber}, table ${order.tableLabel}`);
  clearTimeout(button._disarm);
  button._disarm = setTimeout(() => {
    if (!button.isConnected) return;
    delete button.dataset.armed;
    button.textContent = 'Cancel';
    button.setAttribute('aria-label', `Cancel ticket ${order.ticketNumber}, table ${order.tableLabel}`);
  }, 5000);
}
