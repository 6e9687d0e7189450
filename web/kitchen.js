// Kitchen display: /kitchen/{shopId}[?station=bar]
//
// Loads the open tickets (GET /api/v1/shops/{shopId}/orders?status=placed,
// accepted,preparing,ready&limit=500), then follows the shop's event stream.
// Every order it hears of (list, order.placed, order.updated, an action's
// answer, a refresh) is upserted by orderId keeping the higher `version`, so
// a resumed stream never loses or doubles a ticket. Served and cancelled
// tickets leave the board; they and the ready ones are listed under
// "Recently done" for 10 minutes, to recall.
//
// The board flows the tickets by age (oldest first, left to right, then the
// next row; the ready ones after a "Ready" divider), each card showing its
// status; the settings offer the older four columns by status instead. The
// parts: kitchen-ticket.js (a card), kitchen-keys.js (keyboard and bump
// bar), kitchen-allday.js (all-day counts), kitchen-station.js (stations),
// kitchen-recent.js (recently done), kitchen-recall.js (undoing a bump),
// kitchen-service.js (tables calling) and kitchen-settings.js (the shop's
// age thresholds, the layout this screen keeps, the settings dialog); the
// chime is console.js's, shared with the staff console.
//
// Test hooks (plus the shared ones listed in console.js: #sign-in,
// #login-form, #token-form, #app, #signed-in-as, #sign-out, #shop-name, #connection
// [data-state], #announcer, #problem):
//   #board                        the board; data-layout = flow | columns
//   section[data-column=STATUS]   a status (placed, accepted, preparing,
//                                 ready): a column in the columns layout,
//                                 [data-column-count=STATUS] in its heading;
//                                 in the flow layout only the ready one's
//                                 heading shows (h2#col-ready, a divider)
//   ol[data-list=STATUS]          its ticket list; [data-count=STATUS] its
//                                 count (in the footer)
//   li.ticket[data-order-id]      a ticket on the board, with data-status,
//                                 data-version, data-ticket-number, data-table,
//                                 data-position (1-based, in display order:
//                                 the number key that selects it),
//                                 data-age-level (as its time.ticket-age),
//                                 data-selected="true" when selected, and
//                                 aria-busy="true" while a change is sent
//     .ticket-number / .ticket-table / .ticket-note / .ticket-status
//     .ticket-key                 its number key (1–9; empty after the 9th)
//     li[data-line]               an item line: .line-qty, .line-name,
//                                 li[data-topping] for each topping,
//                                 .line-options li[data-option] for each
//                                 choice, and .line-note when the guest
//                                 wrote one. With a station, only its lines
//     .ticket-others[data-other-lines]  how many lines are for other stations
//     time.ticket-age             age, data-age-level = fresh | warn | late
//                                 (amber and red after the shop's thresholds,
//                                 kitchenWarnMinutes / kitchenLateMinutes,
//                                 5 and 10 min by default, re-read on
//                                 menu.changed),
//                                 refreshed every 5 s; its title "Placed at
//                                 14:05" is the shop's time (its timezone, as
//                                 every time on this page: #clock and the
//                                 recent list too), not the device's
//     button[data-action=advance] moves the ticket on; data-next-status names
//                                 the status it sends (accepted, preparing,
//                                 ready, served)
//     button[data-action=cancel]  only on placed/accepted/preparing tickets.
//                                 The first press arms it (data-armed="true",
//                                 text "Confirm cancel"); a second press within
//                                 5 s sends the cancel
//     [data-role=ticket-error]    the last refusal for this ticket (role=alert)
//   #board-empty                  shown when no ticket is (flow layout)
//   #recent-list li[data-recent-order-id]  ready/served/cancelled tickets of
//                                 the last 10 minutes, with data-status; the
//                                 newest first, at most 8; kept on the device
//                                 over a reload; button[data-action=recall]
//                                 (data-recall-to) on ready and served ones
//   #all-day-list li[data-all-day-item]    all-day counts (kitchen-allday.js)
//   #station-name, select#station-select, body[data-station]  (kitchen-station.js)
//   button#sound-toggle, #sound-hint   the chime of new tickets and calls
//                                 (console.js's Chime; mute kept in
//                                 localStorage ordergate.kitchen.muted)
//   #settings-open, dialog#settings-dialog, #layout-select,
//                       #settings-thresholds                  (kitchen-settings.js)
//   #help-open, dialog#help-dialog, #help-close, #key-legend  (kitchen-keys.js)
//   #age-legend                   the shop's thresholds in use
//   #service, #service-count, #service-calls li[data-request-id][data-kind]
//                       button[data-action=ack]               (kitchen-service.js)
//
// Status changes are POST /api/v1/orders/{id}/status with expectedVersion and
// an Idempotency-Key made once per intended change (order, version, target)
// and reused when that change is sent again (automatic retries, or a second
// press after a network failure). A 409 VERSION_CONFLICT or
// INVALID_TRANSITION re-reads the order and says what it is now. A recall is
// POST /api/v1/orders/{id}/recall {expectedVersion} the same way; its
// refusals (RECALL_EXPIRED, VERSION_CONFLICT, NOTHING_TO_RECALL, or a
// server without recall: 404/405) are shown in #problem with their code.

import {
  api,
  announce,
  Chime,
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
  withStaffSignIn,
} from './console.js';
import { allDayCounts, renderAllDay } from './kitchen-allday.js';
import { compareInstants } from './order-sdk.js';
import { Keyboard } from './kitchen-keys.js';
import { recallOrder } from './kitchen-recall.js';
import { RecentStore, renderRecent } from './kitchen-recent.js';
import { ServiceCalls } from './kitchen-service.js';
import { DEFAULT_THRESHOLDS, initSettingsDialog, loadSettings, shopThresholds } from './kitchen-settings.js';
import { Stations } from './kitchen-station.js';
import { armCancel, describeTicket, fillTicket, NEXT, STATUS_LABEL } from './kitchen-ticket.js';

const ACTIVE = ['placed', 'accepted', 'preparing', 'ready'];
const DONE = new Set(['ready', 'served', 'cancelled']);
/** How far along the status machine a status is (a recall goes back). */
const RANK = { placed: 0, accepted: 1, preparing: 2, ready: 3, served: 4, cancelled: 4 };

const shopId = shopIdFromPath();
const ordersPath = `/api/v1/shops/${encodeURIComponent(shopId)}/orders`;
const listPath = `${ordersPath}?status=${ACTIVE.join(',')}&limit=500`;

/** Every order heard of, by id (finished ones too, so they never come back). */
const orders = new Map();
/** Ticket elements on the board, by order id. */
const elements = new Map();
/** Order ids with a status change or a recall on its way. */
const busy = new Set();
/** The last refusal per order id, shown on its ticket. */
const ticketErrors = new Map();
/** Order ids that arrived live, highlighted for a moment. */
const fresh = new Set();
/** The ids of the tickets on the board, in display order. */
let shownIds = [];
const keys = new IntentKeys();
let renderQueued = false;

const settings = loadSettings(shopId);
/** The shop's age thresholds (minutes): read with the shop, again on menu.changed. */
let thresholds = { ...DEFAULT_THRESHOLDS };
const recent = new RecentStore(shopId);
const chime = new Chime({ mutedKey: 'ordergate.kitchen.muted', what: 'each new ticket and each table calling' });
const stations = new Stations(shopId, ({ switched = false } = {}) => {
  for (const el of elements.values()) delete el.dataset.stamp;
  render();
  if (switched) announce(`Showing ${stations.label.toLowerCase()}: ${shownIds.length} open tickets.`);
});
const service = new ServiceCalls({ shopId, chime, announce, formatClock: (iso) => formatTime(iso) });
const keyboard = new Keyboard({
  ids: () => shownIds,
  element: (id) => elements.get(id),
  columns: () => settings.layout === 'columns',
  describe: (id, position, total) =>
    orders.has(id) ? describeTicket(orders.get(id), position, total, formatAge(orders.get(id).createdAt)) : '',
  advance: (id) => advance(id),
  recall: () => recallLast(),
  acknowledge: () => service.acknowledgeOldest(),
  announce,
});

const stream = new LiveStream({
  shopId,
  probe: `${ordersPath}?status=placed&limit=1`,
  events: {
    'order.placed': (order) => upsert(order, { live: true }),
    'order.updated': (order) => upsert(order, { live: true }),
    // A catalog save, or a shop PATCH (the thresholds among them).
    'menu.changed': () => {
      stations.load();
      readShop();
    },
    'service.requested': (req) => service.requested(req),
    'service.acknowledged': (req) => service.acknowledged(req),
  },
  resync: () => Promise.all([reconcile(), service.load()]),
});

withStaffSignIn({
  shopId,
  start: async () => {
    await readShop();
    await stations.load();
    stream.start();
  },
  stop: () => stream.stop(),
});

initSettingsDialog({
  shopId,
  settings,
  thresholds: () => thresholds,
  onChange: (_, { stored }) => {
    for (const el of elements.values()) delete el.dataset.stamp;
    render();
    announce(`Layout saved: ${settings.layout === 'flow' ? 'tickets by age' : 'columns by status'}.`);
    if (!stored) showProblem('This browser did not store the settings: they last until the page is reloaded.');
  },
});
startClock();
keepScreenOn();
setInterval(() => {
  if (recent.prune()) scheduleRender();
  service.render();
}, 15_000);

/** The shop: its name and zone (loadShop) and its age thresholds, which recolour the tickets. */
async function readShop() {
  try {
    const shop = await loadShop(shopId);
    const next = shopThresholds(shop);
    if (next.warnMin !== thresholds.warnMin || next.lateMin !== thresholds.lateMin) {
      thresholds = next;
      updateAges();
      scheduleRender(); // the legend
    }
    clearProblem('shop');
  } catch (err) {
    if (err.status !== 401) showProblem(`Could not read the shop: ${problemText(err)}`, 'shop');
  }
}

/**
 * Store an order if it is new or newer than the one known. Returns true if
 * it changed anything.
 */
function upsert(order, { live = false } = {}) {
  if (!order || !order.orderId) return false;
  const known = orders.get(order.orderId);
  if (known && known.version >= order.version) return false;
  orders.set(order.orderId, order);
  noteRecent(known, order, live);
  const isActive = ACTIVE.includes(order.status);
  if (live && !known && isActive && onThisScreen(order)) {
    fresh.add(order.orderId);
    setTimeout(() => {
      fresh.delete(order.orderId);
      const el = elements.get(order.orderId);
      if (el) el.classList.remove('is-new');
    }, 10_000);
    chime.play('ticket');
    announce(`New ticket ${order.ticketNumber} for table ${order.tableLabel}.`);
  } else if (live && known && known.status !== order.status && onThisScreen(order)) {
    announce(`Ticket ${order.ticketNumber} is now ${STATUS_LABEL[order.status].toLowerCase()}.`);
  }
  scheduleRender();
  return true;
}

/** Keep "Recently done" in line with a change of status. */
function noteRecent(known, order, live) {
  const entry = recent.get(order.orderId);
  const before = known ? known.status : entry ? entry.status : null;
  if (before === order.status) return;
  if (before && RANK[order.status] < RANK[before]) {
    // Moved back (a recall): it is not done any more.
    if (entry) recent.remove(order.orderId);
  } else if (DONE.has(order.status)) {
    if (known || live) recent.add(order.orderId, order.status, known ? known.status : null);
    else if (entry) recent.restate(order.orderId, order.status); // moved on while this page was away
  } else if (entry) {
    recent.remove(order.orderId);
  }
}

/** Whether the order has a line for this screen's station (any, without one). */
function onThisScreen(order) {
  return (order.items || []).some((line) => stations.lineShown(line));
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
  // or placed after the list was read: ask for it. So are the recently
  // done ones kept over a reload.
  const missing = [...orders.values()].filter((o) => ACTIVE.includes(o.status) && !listed.has(o.orderId)).slice(0, 50);
  for (const o of missing) await refreshOrder(o.orderId);
  for (const entry of [...recent.entries]) {
    if (!orders.has(entry.orderId)) await refreshOrder(entry.orderId);
  }
  render();
}

async function refreshOrder(orderId) {
  try {
    const order = await api(`/api/v1/orders/${encodeURIComponent(orderId)}`, { retries: 2 });
    upsert(order);
    return orders.get(orderId) || order;
  } catch (err) {
    if (err.status === 404) {
      orders.delete(orderId);
      recent.remove(orderId);
      scheduleRender();
    }
    return null;
  }
}

/** Enter (or the advance button): the ticket's next step. */
function advance(orderId) {
  const order = orders.get(orderId);
  const next = order && NEXT[order.status];
  if (next) changeStatus(orderId, next);
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
    if (to !== 'cancelled' && updated.status === to) recent.noteBump({ orderId, from: order.status, to });
    announce(
      `Ticket ${order.ticketNumber} ${to === 'cancelled' ? 'cancelled' : `moved to ${STATUS_LABEL[to].toLowerCase()}`}.`,
    );
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    if (err.code === 'VERSION_CONFLICT' || err.code === 'INVALID_TRANSITION') {
      const now = await refreshOrder(orderId);
      const where = now ? STATUS_LABEL[now.status].toLowerCase() : 'gone';
      const text =
        `Ticket ${order.ticketNumber} was changed on another screen and is now ${where}: ` +
        'your change was not made. Check it and try again.';
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

function recall(orderId) {
  return recallOrder(
    {
      orders,
      busy,
      keys,
      recent,
      upsert,
      refreshOrder,
      render,
      selectOnBoard: (id) => {
        if (shownIds.includes(id)) keyboard.select(id, { focus: document.activeElement === document.body });
      },
    },
    orderId,
  );
}

/** R / Backspace: recall the last bump (see RecentStore.recallTarget). */
function recallLast() {
  const orderId = recent.recallTarget(orders);
  if (orderId) recall(orderId);
  else announce('Nothing to recall: no ticket was moved on here, or marked ready or served, in the last 10 minutes.');
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
  return compareInstants(a.createdAt, b.createdAt) || (a.orderId < b.orderId ? -1 : 1);
}

/**
 * The open tickets of this screen in display order: by age, the ready ones
 * after the rest (flow), or column by column (columns).
 */
function displayOrder() {
  const open = [...orders.values()].filter((o) => ACTIVE.includes(o.status) && onThisScreen(o)).sort(byAge);
  if (settings.layout === 'columns') return ACTIVE.flatMap((s) => open.filter((o) => o.status === s));
  return [...open.filter((o) => o.status !== 'ready'), ...open.filter((o) => o.status === 'ready')];
}

/** Bring the board in line with `orders`, keeping focus where it was. */
function render() {
  const focused = document.activeElement;
  const focusTicket = focused && focused.closest && focused.closest('#board li.ticket');
  const focusId = focusTicket ? focusTicket.dataset.orderId : null;
  const focusAction = focusTicket && focused !== focusTicket ? focused.dataset.action : null;
  const focusIndex = focusId ? shownIds.indexOf(focusId) : -1;

  const board = document.getElementById('board');
  board.dataset.layout = settings.layout;
  board.setAttribute('aria-label', settings.layout === 'flow' ? 'Open tickets, oldest first' : 'Open tickets by status');
  const shown = displayOrder();
  shownIds = shown.map((o) => o.orderId);
  for (const status of ACTIVE) {
    const list = document.querySelector(`ol[data-list=${status}]`);
    const mine = shown.filter((o) => o.status === status);
    mine.forEach((order, i) => {
      const el = ticketElement(order);
      if (list.children[i] !== el) list.insertBefore(el, list.children[i] || null);
    });
    document.querySelector(`[data-count=${status}]`).textContent = String(mine.length);
    document.querySelector(`[data-column-count=${status}]`).textContent = String(mine.length);
    list.closest('.column').classList.toggle('is-empty', mine.length === 0);
  }
  const seen = new Set(shownIds);
  for (const [id, el] of elements) {
    if (!seen.has(id)) {
      el.remove();
      elements.delete(id);
    }
  }
  // Flow: CSS `order` puts the tickets (and the "Ready" divider) in display order.
  const flow = settings.layout === 'flow';
  const cooking = shown.filter((o) => o.status !== 'ready').length;
  shown.forEach((order, i) => {
    const el = elements.get(order.orderId);
    el.dataset.position = String(i + 1);
    el.querySelector('.ticket-key').textContent = i < 9 ? String(i + 1) : '';
    el.style.order = flow ? String(2 * i + 2) : '';
  });
  document.getElementById('col-ready').style.order = flow ? String(2 * cooking + 1) : '';
  document.getElementById('board-empty').hidden = shown.length > 0;
  document.getElementById('board-empty').textContent = stations.wanted
    ? `No open tickets for the ${stations.label.toLowerCase()}.`
    : 'No open tickets. New ones appear here, with a chime.';

  renderRecent(recent, orders, { formatClock: (iso) => formatTime(iso), busy });
  renderAllDay(allDayCounts(orders.values(), { lineShown: (line) => stations.lineShown(line) }), {
    stationLabel: stations.wanted ? `· ${stations.label}` : '',
  });
  document.getElementById('age-legend').textContent =
    `Amber ${thresholds.warnMin} min · red ${thresholds.lateMin} min`;
  keyboard.sync();

  // Focus follows the ticket or, if it left the board, goes to the one now
  // in its place, or to the board.
  if (focusId && !document.activeElement?.closest?.('#board li.ticket')) {
    const el = elements.get(focusId) || elements.get(shownIds[Math.min(focusIndex, shownIds.length - 1)]);
    const button =
      el && focusAction && (el.querySelector(`[data-action=${focusAction}]`) || el.querySelector('[data-action=advance]'));
    const target = button || el || board;
    target.focus({ preventScroll: true });
  }
}

/** The ticket's element, rebuilt when its order's version or state changed. */
function ticketElement(order) {
  let el = elements.get(order.orderId);
  const isBusy = busy.has(order.orderId);
  const error = ticketErrors.get(order.orderId) || '';
  const stamp = `${order.version}|${isBusy}|${error}|${stations.filtering ? stations.wanted : ''}`;
  if (el && el.dataset.stamp === stamp) return el;
  if (!el) {
    el = h('li', { class: 'ticket', tabindex: '-1' });
    elements.set(order.orderId, el);
  }
  fillTicket(el, order, {
    busy: isBusy,
    error,
    shown: (line) => stations.lineShown(line),
    placedAt: `Placed at ${formatTime(order.createdAt)}`,
  });
  el.dataset.stamp = stamp;
  el.classList.toggle('is-new', fresh.has(order.orderId));
  updateAge(el.querySelector('.ticket-age'), order.createdAt);
  return el;
}

/** Every ticket's age and colour, now. */
function updateAges(now = serverNow()) {
  for (const el of elements.values()) {
    const order = orders.get(el.dataset.orderId);
    if (order) updateAge(el.querySelector('.ticket-age'), order.createdAt, now);
  }
}

function updateAge(timeEl, createdAt, now = serverNow()) {
  const mins = (now - Date.parse(createdAt)) / 60000;
  const level = mins >= thresholds.lateMin ? 'late' : mins >= thresholds.warnMin ? 'warn' : 'fresh';
  const text = formatAge(createdAt, now);
  timeEl.textContent = level === 'late' ? `Late · ${text}` : text;
  timeEl.dataset.ageLevel = level;
  const card = timeEl.closest('li.ticket');
  if (card) card.dataset.ageLevel = level;
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

document.getElementById('recent-list').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action=recall]');
  if (button && button.getAttribute('aria-disabled') !== 'true') recall(button.dataset.orderId);
});

function startClock() {
  const clock = document.getElementById('clock');
  const tick = () => {
    const now = new Date(serverNow());
    clock.dateTime = now.toISOString();
    clock.textContent = formatTime(now.toISOString());
    updateAges(now.getTime());
  };
  tick();
  setInterval(tick, 5000);
  // The clock is the shop's (console.js): shown again once its zone is known.
  window.addEventListener('ordergate:timezone', tick);
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
