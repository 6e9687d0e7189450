// Kitchen display: /kitchen/{shopId}
//
// Loads the open tickets (GET /api/v1/shops/{shopId}/orders?status=placed,
// accepted,preparing,ready&limit=500), then follows the shop's event stream.
// Every order it hears of (list, order.placed, order.updated, an action's
// answer, a refresh) is upserted by orderId keeping the higher `version`, so
// a resumed stream never loses or doubles a ticket. Served and cancelled
// tickets leave the board for the "Recently done" list.
//
// Test hooks (plus the shared ones listed in console.js: #token-form,
// #token-input, #token-error, #app, #sign-out, #shop-name, #connection
// [data-state], #announcer, #problem):
//   #board                        the board
//   section[data-column=STATUS]   a column (placed, accepted, preparing, ready)
//   ol[data-list=STATUS]          its ticket list; [data-count=STATUS] its count
//   li.ticket[data-order-id]      a ticket on the board, with data-status,
//                                 data-version, data-ticket-number, data-table
//                                 and aria-busy="true" while a change is sent
//     .ticket-number / .ticket-table / .ticket-note
//     li[data-line]               an item line: .line-qty, .line-name,
//                                 li[data-topping] for each topping, and
//                                 .line-note when the guest wrote one
//     time.ticket-age             age, data-age-level = fresh | warn | late,
//                                 refreshed every 5 s
//     button[data-action=advance] moves the ticket on; data-next-status names
//                                 the status it sends (accepted, preparing,
//                                 ready, served)
//     button[data-action=cancel]  only on placed/accepted/preparing tickets.
//                                 The first press arms it (data-armed="true",
//                                 text "Confirm cancel"); a second press within
//                                 5 s sends the cancel
//     [data-role=ticket-error]    the last refusal for this ticket (role=alert)
//   #recent-list li[data-recent-order-id]  served/cancelled tickets, with
//                                 data-status; the newest first, at most 8
//
// Status changes are POST /api/v1/orders/{id}/status with expectedVersion and
// an Idempotency-Key made once per intended change (order, version, target)
// and reused when that change is sent again (automatic retries, or a second
// press after a network failure). A 409 VERSION_CONFLICT or
// INVALID_TRANSITION re-reads the order and says what it is now.

import {
  api,
  announce,
  clearProblem,
  formatAge,
  formatTime,
  h,
  IntentKeys,
  LiveStream,
  loadShop,
  problemText,
  serverNow,
  shopIdFromPath,
  showProblem,
  withStaffToken,
} from './console.js';

const ACTIVE = ['placed', 'accepted', 'preparing', 'ready'];
const CANCELLABLE = new Set(['placed', 'accepted', 'preparing']);
const NEXT = { placed: 'accepted', accepted: 'preparing', preparing: 'ready', ready: 'served' };
const ADVANCE_LABEL = {
  placed: 'Accept',
  accepted: 'Start preparing',
  preparing: 'Mark ready',
  ready: 'Mark served',
};
const STATUS_LABEL = {
  placed: 'New',
  accepted: 'Accepted',
  preparing: 'Preparing',
  ready: 'Ready',
  served: 'Served',
  cancelled: 'Cancelled',
};
const WARN_AFTER_MIN = 10;
const LATE_AFTER_MIN = 20;
const RECENT_MAX = 8;

const shopId = shopIdFromPath();
const ordersPath = `/api/v1/shops/${encodeURIComponent(shopId)}/orders`;
const listPath = `${ordersPath}?status=${ACTIVE.join(',')}&limit=500`;

/** Every order heard of, by id (finished ones too, so they never come back). */
const orders = new Map();
/** Ticket elements on the board, by order id. */
const elements = new Map();
/** Order ids with a status change on its way. */
const busy = new Set();
/** The last refusal per order id, shown on its ticket. */
const ticketErrors = new Map();
/** Order ids that arrived live, highlighted for a moment. */
const fresh = new Set();
/** Served/cancelled tickets, newest first: {order, at}. */
let recent = [];
const keys = new IntentKeys();
let renderQueued = false;

const stream = new LiveStream({
  shopId,
  probe: `${ordersPath}?status=placed&limit=1`,
  events: {
    'order.placed': (order) => upsert(order, { live: true }),
    'order.updated': (order) => upsert(order, { live: true }),
  },
  resync: () => reconcile(),
});

withStaffToken({
  probe: `${ordersPath}?status=placed&limit=1`,
  start: async () => {
    await loadShop(shopId).catch((err) => showProblem(err));
    stream.start();
  },
  stop: () => stream.stop(),
});

startClock();
keepScreenOn();

/**
 * Store an order if it is new or newer than the one known. Returns true if
 * it changed anything.
 */
function upsert(order, { live = false } = {}) {
  if (!order || !order.orderId) return false;
  const known = orders.get(order.orderId);
  if (known && known.version >= order.version) return false;
  orders.set(order.orderId, order);
  const wasActive = known && ACTIVE.includes(known.status);
  const isActive = ACTIVE.includes(order.status);
  if (!isActive && (wasActive || live)) {
    recent = [{ order, at: Date.now() }, ...recent.filter((r) => r.order.orderId !== order.orderId)];
    recent = recent.slice(0, RECENT_MAX);
  }
  if (live && !known && isActive) {
    fresh.add(order.orderId);
    setTimeout(() => {
      fresh.delete(order.orderId);
      const el = elements.get(order.orderId);
      if (el) el.classList.remove('is-new');
    }, 10_000);
    announce(`New ticket ${order.ticketNumber} for table ${order.tableLabel}.`);
  } else if (live && known && known.status !== order.status) {
    announce(`Ticket ${order.ticketNumber} is now ${STATUS_LABEL[order.status].toLowerCase()}.`);
  }
  scheduleRender();
  return true;
}

/** Re-read the list of open tickets and check the ones it no longer has. */
async function reconcile() {
  let list;
  try {
    list = await api(listPath, { retries: 2 });
  } catch (err) {
    if (err.status !== 401) {
      showProblem(`Could not load the tickets: ${problemText(err)}`, 'tickets');
      setTimeout(() => !stream.stopped && reconcile(), 5000);
    }
    return;
  }
  clearProblem('tickets');
  const listed = new Set();
  for (const order of list.orders) {
    listed.add(order.orderId);
    upsert(order);
  }
  // An open ticket the list does not have was finished while we were away,
  // or placed after the list was read: ask for it.
  const missing = [...orders.values()].filter((o) => ACTIVE.includes(o.status) && !listed.has(o.orderId)).slice(0, 50);
  for (const o of missing) await refreshOrder(o.orderId);
  render();
}

async function refreshOrder(orderId) {
  try {
    const order = await api(`/api/v1/orders/${encodeURIComponent(orderId)}`, { retries: 2 });
    upsert(order);
    return order;
  } catch (err) {
    if (err.status === 404) {
      orders.delete(orderId);
      scheduleRender();
    }
    return null;
  }
}

async function changeStatus(orderId, to) {
  const order = orders.get(orderId);
  if (!order || busy.has(orderId)) return;
  const intent = `${orderId}:v${order.version}:${to}`;
  const key = keys.get(intent);
  busy.add(orderId);
  ticketErrors.delete(orderId);
  render();
  try {
    const updated = await api(`/api/v1/orders/${encodeURIComponent(orderId)}/status`, {
      method: 'POST',
      body: { status: to, expectedVersion: order.version },
      key,
      retries: 3,
    });
    keys.forget(intent);
    upsert(updated);
    announce(
      `Ticket ${order.ticketNumber} ${to === 'cancelled' ? 'cancelled' : `moved to ${STATUS_LABEL[to].toLowerCase()}`}.`,
    );
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    if (err.code === 'VERSION_CONFLICT' || err.code === 'INVALID_TRANSITION') {
      const now = await refreshOrder(orderId);
      const where = now ? STATUS_LABEL[now.status].toLowerCase() : 'gone';
      const text = `Ticket ${order.ticketNumber} was changed on another screen and is now ${where}: your change was not made. Check it and try again.`;
      if (now && ACTIVE.includes(now.status)) setTicketError(orderId, text);
      else showProblem(text);
      announce(text);
    } else if (err.status === 404) {
      orders.delete(orderId);
      showProblem(err);
    } else if (err.status !== 401) {
      const again = err.retryable ? ' Press the button again to retry.' : '';
      setTicketError(orderId, `${problemText(err)}${again}`);
      announce(`Ticket ${order.ticketNumber}: ${problemText(err)}`);
    }
  } finally {
    busy.delete(orderId);
    render();
  }
}

function setTicketError(orderId, text) {
  ticketErrors.set(orderId, text);
  setTimeout(() => {
    if (ticketErrors.get(orderId) === text) {
      ticketErrors.delete(orderId);
      const el = elements.get(orderId);
      const slot = el && el.querySelector('[data-role=ticket-error]');
      if (slot) slot.textContent = '';
    }
  }, 15_000);
}

function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

function byAge(a, b) {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.orderId < b.orderId ? -1 : 1;
}

/** Bring the board in line with `orders`, keeping focus where it was. */
function render() {
  const focused = document.activeElement;
  const focusTicket = focused && focused.closest && focused.closest('li.ticket');
  const focusId = focusTicket ? focusTicket.dataset.orderId : null;
  const focusAction = focusId && focused.dataset ? focused.dataset.action : null;
  const focusColumn = focusTicket ? focusTicket.dataset.status : null;
  const focusIndex = focusTicket ? [...focusTicket.parentElement.children].indexOf(focusTicket) : -1;

  const seen = new Set();
  for (const status of ACTIVE) {
    const list = document.querySelector(`ol[data-list=${status}]`);
    const mine = [...orders.values()].filter((o) => o.status === status).sort(byAge);
    mine.forEach((order, i) => {
      seen.add(order.orderId);
      const el = ticketElement(order);
      if (list.children[i] !== el) list.insertBefore(el, list.children[i] || null);
    });
    document.querySelector(`[data-count=${status}]`).textContent = String(mine.length);
    list.closest('.column').classList.toggle('is-empty', mine.length === 0);
  }
  for (const [id, el] of elements) {
    if (!seen.has(id)) {
      el.remove();
      elements.delete(id);
    }
  }
  renderRecent();

  // Focus follows the ticket (to its new column) or, if it left the board,
  // goes to its neighbour or the column's heading.
  if (focusId && !document.activeElement?.closest?.('li.ticket')) {
    const el = elements.get(focusId);
    if (el) {
      const target =
        (focusAction && el.querySelector(`[data-action=${focusAction}]`)) ||
        el.querySelector('[data-action=advance]') ||
        el;
      target.focus();
    } else if (focusColumn) {
      const list = document.querySelector(`ol[data-list=${focusColumn}]`);
      const next = list.children[Math.min(focusIndex, list.children.length - 1)];
      const target = next ? next.querySelector('[data-action=advance]') : document.getElementById(`col-${focusColumn}`);
      if (target) target.focus();
    }
  }
}

/** The ticket's element, rebuilt when its order's version or state changed. */
function ticketElement(order) {
  let el = elements.get(order.orderId);
  const stamp = `${order.version}|${busy.has(order.orderId)}|${ticketErrors.get(order.orderId) || ''}`;
  if (el && el.dataset.stamp === stamp) return el;
  const armed = el && el.querySelector('[data-armed=true]');
  const titleId = `ticket-${order.orderId}`;
  const next = NEXT[order.status];
  const isBusy = busy.has(order.orderId);
  const content = [
    h(
      'header',
      { class: 'ticket-head' },
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
      ),
      h('time', { class: 'ticket-age', datetime: order.createdAt, title: `Placed at ${formatTime(order.createdAt)}` }),
    ),
    h(
      'ul',
      { class: 'ticket-lines', 'aria-label': 'Items' },
      order.items.map((line, i) =>
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
    order.note
      ? h('p', { class: 'ticket-note' }, h('span', { class: 'ticket-note-label', text: 'Note: ' }), order.note)
      : null,
    order.source === 'staff' ? h('p', { class: 'ticket-source', text: 'Staff order' }) : null,
    h(
      'div',
      { class: 'ticket-actions' },
      next
        ? h('button', {
            type: 'button',
            class: `btn btn-advance btn-to-${next}`,
            dataset: { action: 'advance', nextStatus: next },
            'aria-disabled': isBusy ? 'true' : null,
            'aria-label': `${ADVANCE_LABEL[order.status]}: ticket ${order.ticketNumber}, table ${order.tableLabel}`,
            text: isBusy ? 'Sending…' : ADVANCE_LABEL[order.status],
          })
        : null,
      CANCELLABLE.has(order.status)
        ? h('button', {
            type: 'button',
            class: 'btn btn-cancel',
            dataset: { action: 'cancel' },
            'aria-disabled': isBusy ? 'true' : null,
            'aria-label': `Cancel ticket ${order.ticketNumber}, table ${order.tableLabel}`,
            text: 'Cancel',
          })
        : null,
    ),
    h(
      'p',
      { class: 'ticket-error', role: 'alert', dataset: { role: 'ticket-error' } },
      ticketErrors.get(order.orderId) || '',
    ),
  ];
  if (!el) {
    el = h('li', { class: 'ticket', tabindex: '-1', 'aria-labelledby': titleId });
    elements.set(order.orderId, el);
  }
  el.replaceChildren(...content.filter(Boolean));
  Object.assign(el.dataset, {
    orderId: order.orderId,
    status: order.status,
    version: String(order.version),
    ticketNumber: String(order.ticketNumber),
    table: order.tableLabel,
    stamp,
  });
  el.classList.toggle('is-new', fresh.has(order.orderId));
  el.classList.toggle('is-staff', order.source === 'staff');
  if (isBusy) el.setAttribute('aria-busy', 'true');
  else el.removeAttribute('aria-busy');
  if (armed && !isBusy && CANCELLABLE.has(order.status)) armCancel(el.querySelector('[data-action=cancel]'), order);
  updateAge(el.querySelector('.ticket-age'), order.createdAt);
  return el;
}

function updateAge(timeEl, createdAt, now = serverNow()) {
  const mins = (now - Date.parse(createdAt)) / 60000;
  const level = mins >= LATE_AFTER_MIN ? 'late' : mins >= WARN_AFTER_MIN ? 'warn' : 'fresh';
  const text = formatAge(createdAt, now);
  timeEl.textContent = level === 'late' ? `Late · ${text}` : text;
  timeEl.dataset.ageLevel = level;
}

function renderRecent() {
  const list = document.getElementById('recent-list');
  const items = recent.map(({ order, at }) =>
    h(
      'li',
      { class: 'recent-item', dataset: { recentOrderId: order.orderId, status: order.status } },
      h('span', { class: 'recent-number', text: `#${order.ticketNumber}` }),
      h('span', { class: 'recent-table', text: `Table ${order.tableLabel}` }),
      h('span', { class: `recent-status status-${order.status}`, text: STATUS_LABEL[order.status] }),
      h('time', {
        class: 'recent-time',
        datetime: new Date(at).toISOString(),
        text: formatTime(new Date(at).toISOString()),
      }),
    ),
  );
  list.replaceChildren(...items);
  document.getElementById('recent').classList.toggle('is-empty', items.length === 0);
}

/** Cancel needs a second press within 5 s. */
function armCancel(button, order) {
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

document.getElementById('board').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button || button.getAttribute('aria-disabled') === 'true') return;
  const ticket = button.closest('li.ticket');
  const order = ticket && orders.get(ticket.dataset.orderId);
  if (!order) return;
  if (button.dataset.action === 'advance') {
    changeStatus(order.orderId, button.dataset.nextStatus);
  } else if (button.dataset.action === 'cancel') {
    if (button.dataset.armed === 'true') {
      changeStatus(order.orderId, 'cancelled');
    } else {
      armCancel(button, order);
      announce(`Press cancel again to cancel ticket ${order.ticketNumber}.`);
    }
  }
});

function startClock() {
  const clock = document.getElementById('clock');
  const tick = () => {
    const now = new Date(serverNow());
    clock.dateTime = now.toISOString();
    clock.textContent = formatTime(now.toISOString());
    for (const el of elements.values()) {
      const order = orders.get(el.dataset.orderId);
      if (order) updateAge(el.querySelector('.ticket-age'), order.createdAt, now.getTime());
    }
  };
  tick();
  setInterval(tick, 5000);
}

/** Keep a kitchen tablet's screen on where the browser allows it. */
function keepScreenOn() {
  if (!('wakeLock' in navigator)) return;
  const request = () => navigator.wakeLock.request('screen').catch(() => {});
  request();
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') request();
  });
}
