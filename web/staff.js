// Staff console: /staff/{shopId}
//
// Tables (open one with a PIN and a QR code of its guest link, list open and
// recently closed ones, check out with the bill), inventory (set a count or
// untrack, restock, 86 with an optional end time) and the order audit. The
// shop's event stream keeps it current: stock.changed re-reads the inventory,
// session.opened/closed the tables, order events the audit. A table locked
// by wrong PINs makes no event, so the tables are also re-read every 15 s.
// The menu editor (menu-editor.js) is a view of its own at #menu: it hides
// the three service sections while shown; any other hash shows them again.
//
// Test hooks (plus the shared ones listed in console.js: #token-form,
// #token-input, #token-error, #app, #sign-out, #shop-name, #connection
// [data-state], #announcer, #problem):
//   Tables
//   #open-table-form, #table-label, its submit button; #open-table-error
//   #table-card            the table just opened (or shown): data-session-id
//     #table-card-label    its table label
//     #table-pin           its six-digit PIN
//     #table-qr            the QR code (an <svg role=img>) with data-guest-url
//     #table-guest-url     a link to the guest page; #table-card-print, #table-card-close
//   #active-list tr[data-session-id]   an open table: data-table-label,
//                          data-status=active, data-pin-locked (true while
//                          wrong PINs lock it); [data-role=pin];
//                          [data-role=pin-lock] "Locked until …" (while locked);
//                          button[data-action=show-qr],
//                          button[data-action=unlock] (while locked: lifts the lock),
//                          button[data-action=checkout] (opens the bill dialog)
//   #closed-list tr[data-session-id]   a recently closed table (the last 10),
//                          data-status=closed; button[data-action=bill]
//   #bill-dialog           the checkout/bill dialog: data-session-id and
//                          data-mode = preview (table still open) | closed
//     #bill-orders tr[data-order-id]   an order with data-status
//     #bill-total          the total, formatted; data-amount in minor units
//     #checkout-confirm    closes the table (POST …/checkout); shown in preview
//     #bill-error, #bill-print, #bill-close
//   Inventory
//   #inventory-filter      narrows the rows by name
//   #inventory-list tr[data-item-id]   an entry: data-kind (menuItem|topping),
//                          data-stock ("" when untracked), data-sold-out,
//                          data-version
//     [data-role=stock]    the count, or "Untracked"
//     input[data-field=stock] + button[data-action=set-stock]; button[data-action=untrack]
//     input[data-field=restock-quantity] + button[data-action=restock] (hidden
//                          while untracked: [data-role=restock-hint] says why)
//     button[data-action=toggle-sold-out][aria-pressed]  the 86 toggle
//     input[data-field=sold-out-until]  optional end of a new 86 (datetime-local;
//                          hidden while the item is sold out), read and
//                          written as the shop's wall clock (its timezone,
//                          named in the input's title), not the device's
//     [data-role=sold-out-until]        "until …" while an 86 with an end holds
//     [data-role=row-message]           the row's last result (data-kind = ok|error)
//   Audit
//   #audit-refresh; #audit-list tr[data-request-id] with data-code
//   Menu editor (its own hooks are listed at the top of menu-editor.js)
//   #menu-link             the nav link to the editor's view (#menu); aria-current
//                          on the link of the view shown
//   #menu                  the editor's section (hidden unless the hash is #menu;
//                          #tables, #inventory and #audit are hidden while it shows)

import qrcode from './vendor/qrcode.mjs';
import {
  api,
  announce,
  ApiProblem,
  clearProblem,
  formatAge,
  formatDateTime,
  fromZonedInputValue,
  h,
  IntentKeys,
  LiveStream,
  loadShop,
  moneyFormatter,
  problemText,
  serverNow,
  shopIdFromPath,
  shopTimeZone,
  showProblem,
  toZonedInputValue,
  withStaffToken,
} from './console.js';
import { createMenuEditor } from './menu-editor.js';

const shopId = shopIdFromPath();
const shopPath = `/api/v1/shops/${encodeURIComponent(shopId)}`;
const keys = new IntentKeys();
const $ = (id) => document.getElementById(id);

let money = moneyFormatter('USD');
/** Sessions by id (open and recently closed), for labels and the audit. */
const sessions = new Map();
/** Inventory entries by item id, in the server's order. */
let inventory = new Map();
const rows = new Map();

const refreshInventorySoon = debounce(() => loadInventory(), 300);
const refreshSessionsSoon = debounce(() => loadSessions(), 300);
const refreshAuditSoon = debounce(() => loadAudit(), 800);

const stream = new LiveStream({
  shopId,
  probe: `${shopPath}/inventory`,
  events: {
    'stock.changed': (change) => {
      applyStockChange(change);
      refreshInventorySoon();
    },
    'session.opened': () => refreshSessionsSoon(),
    'session.closed': () => refreshSessionsSoon(),
    'order.placed': () => refreshAuditSoon(),
  },
  resync: () => Promise.all([loadInventory(), loadSessions().then(loadAudit)]),
});

$('kitchen-link').href = `/kitchen/${encodeURIComponent(shopId)}`;

// A saved menu may add or retire items: the inventory follows.
const menuEditor = createMenuEditor({ shopId, onSaved: () => refreshInventorySoon() });

withStaffToken({
  probe: `${shopPath}/inventory`,
  start: async () => {
    try {
      const shop = await loadShop(shopId);
      money = moneyFormatter(shop.currency);
    } catch (err) {
      showProblem(err);
    }
    stream.start();
    menuEditor.start();
  },
  stop: () => stream.stop(),
});

// ---------------------------------------------------------------- views

const SERVICE_SECTIONS = ['tables', 'inventory', 'audit'];

/** #menu shows the menu editor alone; any other hash the service sections. */
function showView(moved = false) {
  const menu = location.hash === '#menu';
  for (const id of SERVICE_SECTIONS) $(id).hidden = menu;
  $('menu').hidden = !menu;
  for (const a of document.querySelectorAll('.topbar-nav a[href^="#"]')) {
    const current = menu ? a.getAttribute('href') === '#menu' : a.getAttribute('href') === location.hash;
    if (current) a.setAttribute('aria-current', menu ? 'page' : 'location');
    else a.removeAttribute('aria-current');
  }
  menuEditor.setVisible(menu);
  if (!moved) return;
  // The target was hidden when the link was followed: go to it now.
  const target = menu ? $('menu') : SERVICE_SECTIONS.includes(location.hash.slice(1)) && $(location.hash.slice(1));
  if (target) {
    target.scrollIntoView({ block: 'start' });
    target.focus({ preventScroll: true });
  }
}
window.addEventListener('hashchange', () => showView(true));
showView();

setInterval(tick, 30_000);
setInterval(() => {
  if (!$('app').hidden) loadSessions();
}, 15_000);

// ---------------------------------------------------------------- tables

$('open-table-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $('table-label');
  const error = $('open-table-error');
  const label = input.value.trim();
  error.textContent = '';
  input.removeAttribute('aria-invalid');
  if (!label) {
    error.textContent = 'Enter a table name.';
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  const submit = event.target.querySelector('button[type=submit]');
  const intent = `open-table:${label}`;
  submit.disabled = true;
  try {
    const session = await api(`${shopPath}/sessions`, {
      method: 'POST',
      body: { tableLabel: label },
      key: keys.get(intent),
      retries: 2,
    });
    keys.forget(intent);
    input.value = '';
    sessions.set(session.sessionId, session);
    renderSessions();
    showTableCard(session);
    announce(`Table ${session.tableLabel} is open. PIN ${session.pin.split('').join(' ')}.`);
    refreshSessionsSoon();
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    if (err.status !== 401) {
      error.textContent = problemText(err);
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    }
  } finally {
    submit.disabled = false;
  }
});

function showTableCard(session) {
  const card = $('table-card');
  card.dataset.sessionId = session.sessionId;
  $('table-card-label').textContent = session.tableLabel;
  $('table-pin').textContent = session.pin || '';
  const link = $('table-guest-url');
  link.href = session.guestUrl || '/';
  const qr = $('table-qr');
  qr.dataset.guestUrl = session.guestUrl || '';
  qr.replaceChildren(session.guestUrl ? qrSvg(session.guestUrl, `QR code for table ${session.tableLabel}`) : '');
  card.hidden = false;
  card.scrollIntoView({ block: 'nearest' });
}

$('table-card-close').addEventListener('click', () => {
  $('table-card').hidden = true;
  $('table-label').focus();
});

$('table-card-print').addEventListener('click', () => printOnly('print-card'));

/** The QR code of `text` as an SVG: one path of dark modules, a quiet zone of 4. */
function qrSvg(text, label) {
  const qr = qrcode(0, 'M');
  // The library takes one byte per character: give it the UTF-8 bytes.
  qr.addData(String.fromCharCode(...new TextEncoder().encode(text)), 'Byte');
  qr.make();
  const count = qr.getModuleCount();
  const margin = 4;
  const size = count + margin * 2;
  let d = '';
  for (let row = 0; row < count; row += 1) {
    for (let col = 0; col < count; col += 1) {
      if (qr.isDark(row, col)) d += `M${col + margin} ${row + margin}h1v1h-1z`;
    }
  }
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('class', 'qr-svg');
  svg.dataset.modules = String(count);
  const bg = document.createElementNS(ns, 'rect');
  bg.setAttribute('width', String(size));
  bg.setAttribute('height', String(size));
  bg.setAttribute('fill', '#ffffff');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000000');
  svg.append(bg, path);
  return svg;
}

async function loadSessions() {
  try {
    const [active, closed] = await Promise.all([
      api(`${shopPath}/sessions?status=active&limit=500`, { retries: 2 }),
      api(`${shopPath}/sessions?status=closed&limit=10`, { retries: 2 }),
    ]);
    for (const [id, s] of sessions) if (s.status === 'active') sessions.delete(id);
    for (const s of [...active.sessions, ...closed.sessions]) sessions.set(s.sessionId, s);
    recentClosed = closed.sessions.map((s) => s.sessionId);
    renderSessions();
    clearProblem('tables');
  } catch (err) {
    if (err.status !== 401) showProblem(`Could not load the tables: ${problemText(err)}`, 'tables');
  }
}

let recentClosed = [];

function renderSessions() {
  const active = [...sessions.values()]
    .filter((s) => s.status === 'active')
    .sort((a, b) => a.tableLabel.localeCompare(b.tableLabel, undefined, { numeric: true }));
  const closed = recentClosed.map((id) => sessions.get(id)).filter(Boolean);
  replaceRows($('active-list'), active.map(activeRow));
  replaceRows($('closed-list'), closed.map(closedRow));
  const card = $('table-card');
  const shown = !card.hidden && sessions.get(card.dataset.sessionId);
  if (shown && shown.status !== 'active') card.hidden = true; // checked out elsewhere
  $('active-count').textContent = String(active.length);
  $('active-empty').hidden = active.length > 0;
  $('closed-empty').hidden = closed.length > 0;
}

/** Swap a tbody's rows, keeping focus on the same button of the same row. */
function replaceRows(tbody, newRows) {
  const focused = document.activeElement;
  const row = focused && tbody.contains(focused) ? focused.closest('tr') : null;
  const sessionId = row && row.dataset.sessionId;
  const action = focused && focused.dataset ? focused.dataset.action : null;
  tbody.replaceChildren(...newRows);
  if (sessionId) {
    const again = tbody.querySelector(`tr[data-session-id="${sessionId}"] [data-action="${action}"]`);
    if (again) again.focus();
  }
}

/** Wrong PINs lock a table until pinLockedUntil; the lock lapses by itself then. */
function pinLocked(s) {
  return Boolean(s.pinLockedUntil) && Date.parse(s.pinLockedUntil) > serverNow();
}

function activeRow(s) {
  const locked = pinLocked(s);
  return h(
    'tr',
    {
      dataset: { sessionId: s.sessionId, tableLabel: s.tableLabel, status: s.status, pinLocked: String(locked) },
      class: locked ? 'is-locked' : null,
    },
    h('th', { scope: 'row', class: 'table-label', text: s.tableLabel }),
    h(
      'td',
      {},
      h('span', { class: 'pin-cell', dataset: { role: 'pin' }, text: s.pin || '—' }),
      locked
        ? h('span', {
            class: 'badge badge-locked',
            dataset: { role: 'pin-lock' },
            title: 'Too many wrong PINs: guests who have not opened the table yet cannot get in',
            text: `Locked until ${formatDateTime(s.pinLockedUntil)}`,
          })
        : null,
    ),
    h('td', {}, h('time', { datetime: s.openedAt, text: `${formatDateTime(s.openedAt)} · ${formatAge(s.openedAt)}` })),
    h(
      'td',
      { class: 'actions' },
      h('button', {
        type: 'button',
        class: 'btn btn-small',
        dataset: { action: 'show-qr' },
        'aria-label': `Show the QR code of table ${s.tableLabel}`,
        text: 'QR code',
      }),
      locked
        ? h('button', {
            type: 'button',
            class: 'btn btn-small btn-danger',
            dataset: { action: 'unlock' },
            'aria-label': `Unlock the PIN of table ${s.tableLabel}`,
            text: 'Unlock',
          })
        : null,
      h('button', {
        type: 'button',
        class: 'btn btn-small btn-primary',
        dataset: { action: 'checkout' },
        'aria-label': `Check out table ${s.tableLabel}`,
        text: 'Check out',
      }),
    ),
  );
}

function closedRow(s) {
  return h(
    'tr',
    { dataset: { sessionId: s.sessionId, tableLabel: s.tableLabel, status: s.status } },
    h('th', { scope: 'row', class: 'table-label', text: s.tableLabel }),
    h('td', {}, h('time', { datetime: s.openedAt, text: formatDateTime(s.openedAt) })),
    h('td', {}, s.closedAt ? h('time', { datetime: s.closedAt, text: formatDateTime(s.closedAt) }) : '—'),
    h(
      'td',
      { class: 'actions' },
      h('button', {
        type: 'button',
        class: 'btn btn-small',
        dataset: { action: 'bill' },
        'aria-label': `Show the bill of table ${s.tableLabel}`,
        text: 'Bill',
      }),
    ),
  );
}

for (const id of ['active-list', 'closed-list']) {
  $(id).addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const session = sessions.get(button.closest('tr').dataset.sessionId);
    if (!session) return;
    if (button.dataset.action === 'show-qr') {
      showTableCard(session);
      $('table-card').focus();
      announce(`Showing the QR code and PIN of table ${session.tableLabel}.`);
    } else if (button.dataset.action === 'unlock') {
      unlockTable(session, button);
    } else if (button.dataset.action === 'checkout') {
      openBill(session, 'preview', button);
    } else if (button.dataset.action === 'bill') {
      openBill(session, 'closed', button);
    }
  });
}

async function unlockTable(session, button) {
  const focused = document.activeElement === button;
  button.disabled = true;
  try {
    // Lifting a lock twice is lifting it once: a plain retry is safe.
    const unlocked = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/unlock`, {
      method: 'POST',
      retries: 2,
    });
    sessions.set(unlocked.sessionId, unlocked);
    renderSessions();
    clearProblem('tables');
    announce(`Table ${unlocked.tableLabel} is unlocked: its guests can use the PIN again.`);
    // The Unlock button is gone with the lock: keep the focus on its row.
    if (focused) {
      const row = $('active-list').querySelector(`tr[data-session-id="${unlocked.sessionId}"]`);
      row?.querySelector('[data-action=show-qr]')?.focus();
    }
    refreshSessionsSoon();
  } catch (err) {
    button.disabled = false;
    if (err.status !== 401) showProblem(`Could not unlock table ${session.tableLabel}: ${problemText(err)}`, 'tables');
  }
}

// ---------------------------------------------------------------- the bill

let billSession = null;
let billOpener = null;

async function openBill(session, mode, opener) {
  billSession = session;
  billOpener = opener;
  const dialog = $('bill-dialog');
  dialog.dataset.sessionId = session.sessionId;
  dialog.dataset.mode = mode;
  $('bill-title').textContent =
    mode === 'preview' ? `Check out table ${session.tableLabel}` : `Bill for table ${session.tableLabel}`;
  $('bill-state').textContent = 'Loading…';
  $('bill-error').textContent = '';
  $('bill-orders').replaceChildren();
  $('bill-total').textContent = '';
  $('checkout-confirm').hidden = mode !== 'preview';
  $('checkout-confirm').disabled = true;
  if (!dialog.open) dialog.showModal();
  try {
    if (mode === 'preview') {
      const { orders } = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/orders?limit=500`, {
        retries: 2,
      });
      const total = orders.filter((o) => o.status !== 'cancelled').reduce((sum, o) => sum + o.total, 0);
      renderBill(orders.slice().reverse(), total);
      const open = orders.filter((o) => o.status !== 'served' && o.status !== 'cancelled').length;
      $('bill-state').textContent =
        'The table is still open. Checking out closes it: its guests can no longer order. Cancelled orders are not charged.' +
        (open ? ` Note: ${open === 1 ? '1 order is' : `${open} orders are`} not served yet.` : '');
      $('checkout-confirm').disabled = false;
      $('checkout-confirm').focus();
    } else {
      // Checking out a closed table again returns its bill, unchanged.
      const bill = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/checkout`, {
        method: 'POST',
        key: keys.get(`checkout:${session.sessionId}`),
        retries: 2,
      });
      showClosedBill(bill);
      $('bill-close').focus();
    }
  } catch (err) {
    $('bill-state').textContent = '';
    if (err.status !== 401) $('bill-error').textContent = problemText(err);
    else dialog.close();
  }
}

$('checkout-confirm').addEventListener('click', async () => {
  if (!billSession) return;
  const session = billSession;
  const button = $('checkout-confirm');
  const intent = `checkout:${session.sessionId}`;
  button.disabled = true;
  $('bill-error').textContent = '';
  try {
    const bill = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/checkout`, {
      method: 'POST',
      key: keys.get(intent),
      retries: 3,
    });
    keys.forget(intent);
    showClosedBill(bill);
    sessions.set(session.sessionId, { ...session, status: 'closed', closedAt: bill.closedAt });
    recentClosed = [session.sessionId, ...recentClosed.filter((id) => id !== session.sessionId)].slice(0, 10);
    renderSessions();
    if (!$('table-card').hidden && $('table-card').dataset.sessionId === session.sessionId)
      $('table-card').hidden = true;
    announce(`Table ${bill.tableLabel} is checked out. Total ${money(bill.total)}.`);
    $('bill-close').focus();
    refreshSessionsSoon();
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    button.disabled = false;
    if (err.status !== 401) $('bill-error').textContent = problemText(err);
  }
});

function showClosedBill(bill) {
  const dialog = $('bill-dialog');
  dialog.dataset.mode = 'closed';
  $('bill-title').textContent = `Bill for table ${bill.tableLabel}`;
  $('checkout-confirm').hidden = true;
  $('bill-state').textContent = `Closed ${formatDateTime(bill.closedAt)}. Cancelled orders are listed but not charged.`;
  renderBill(bill.orders, bill.total);
  keys.forget(`checkout:${bill.sessionId}`);
}

function renderBill(orders, total) {
  $('bill-orders').replaceChildren(
    ...orders.map((o) =>
      h(
        'tr',
        { dataset: { orderId: o.orderId, status: o.status }, class: o.status === 'cancelled' ? 'is-cancelled' : null },
        h('th', { scope: 'row', text: `#${o.ticketNumber}` }),
        h(
          'td',
          {},
          h(
            'ul',
            { class: 'bill-lines' },
            o.items.map((line) =>
              h(
                'li',
                {},
                h(
                  'span',
                  { class: 'bill-line-name' },
                  `${line.quantity}× ${line.name}`,
                  line.toppings.length
                    ? h('span', { class: 'bill-toppings', text: ` + ${line.toppings.map((t) => t.name).join(', ')}` })
                    : null,
                ),
                h('span', { class: 'bill-line-total', text: money(line.lineTotal) }),
              ),
            ),
          ),
          o.note ? h('p', { class: 'bill-note', text: `Note: ${o.note}` }) : null,
        ),
        h('td', {
          class: `status status-${o.status}`,
          text: o.status === 'cancelled' ? 'Cancelled (not charged)' : o.status,
        }),
        h('td', { class: 'num' }, o.status === 'cancelled' ? h('s', { text: money(o.total) }) : money(o.total)),
      ),
    ),
  );
  $('bill-total').textContent = money(total);
  $('bill-total').dataset.amount = String(total);
  $('bill-empty').hidden = orders.length > 0;
}

$('bill-close').addEventListener('click', () => $('bill-dialog').close());
$('bill-print').addEventListener('click', () => printOnly('print-bill'));
$('bill-dialog').addEventListener('close', () => {
  const sessionId = $('bill-dialog').dataset.sessionId;
  billSession = null;
  if (billOpener && billOpener.isConnected) {
    billOpener.focus();
    return;
  }
  // The table was checked out, so its row moved to the closed list.
  const bill = document.querySelector(`#closed-list tr[data-session-id="${sessionId}"] [data-action=bill]`);
  (bill || $('table-label')).focus();
});

function printOnly(what) {
  document.body.classList.add(what);
  const done = () => {
    document.body.classList.remove(what);
    window.removeEventListener('afterprint', done);
  };
  window.addEventListener('afterprint', done);
  window.print();
}

// ---------------------------------------------------------------- inventory

async function loadInventory() {
  try {
    const { entries } = await api(`${shopPath}/inventory`, { retries: 2 });
    const next = new Map();
    for (const entry of entries) {
      const known = inventory.get(entry.itemId);
      // A newer entry from an answer that beat this list is kept.
      next.set(entry.itemId, known && known.version > entry.version ? known : entry);
    }
    inventory = next;
    renderInventory();
    clearProblem('inventory');
  } catch (err) {
    if (err.status !== 401) showProblem(`Could not load the inventory: ${problemText(err)}`, 'inventory');
  }
}

/** A stock.changed event, shown at once (the list re-read follows). */
function applyStockChange(change) {
  const entry = inventory.get(change.itemId);
  if (!entry) return;
  updateRow({ ...entry, stock: change.stock, soldOut: change.soldOut, soldOutUntil: change.soldOutUntil ?? null });
}

function renderInventory() {
  const tbody = $('inventory-list');
  const order = [];
  for (const entry of inventory.values()) {
    order.push(updateRow(entry));
  }
  order.forEach((row, i) => {
    if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] || null);
  });
  for (const [id, row] of rows) {
    if (!inventory.has(id)) {
      row.remove();
      rows.delete(id);
    }
  }
  applyFilter();
}

/** The row of an entry: built once, its read-only parts updated in place. */
function updateRow(entry) {
  let row = rows.get(entry.itemId);
  if (!row) {
    row = buildRow(entry);
    rows.set(entry.itemId, row);
  }
  const tracked = entry.stock !== null && entry.stock !== undefined;
  const soldOut = effectiveSoldOut(entry);
  Object.assign(row.dataset, {
    stock: tracked ? String(entry.stock) : '',
    soldOut: String(soldOut),
    version: String(entry.version),
  });
  row.classList.toggle('is-sold-out', soldOut);
  const stock = row.querySelector('[data-role=stock]');
  stock.textContent = tracked ? String(entry.stock) : 'Untracked';
  stock.classList.toggle('is-untracked', !tracked);
  stock.classList.toggle('is-zero', tracked && entry.stock === 0);
  row.querySelector('[data-action=untrack]').hidden = !tracked;
  const restock = row.querySelector('[data-action=restock]');
  const restockInput = row.querySelector('[data-field=restock-quantity]');
  restock.hidden = !tracked;
  restockInput.hidden = !tracked;
  row.querySelector('[data-role=restock-hint]').hidden = tracked;
  const toggle = row.querySelector('[data-action=toggle-sold-out]');
  toggle.setAttribute('aria-pressed', String(soldOut));
  toggle.querySelector('.toggle-state').textContent = soldOut ? 'Sold out' : 'Available';
  const until = row.querySelector('[data-role=sold-out-until]');
  const untilActive = soldOut && entry.soldOutUntil && Date.parse(entry.soldOutUntil) > Date.now();
  until.textContent = untilActive
    ? `until ${formatDateTime(entry.soldOutUntil)}`
    : soldOut && tracked && entry.stock === 0
      ? 'no stock left'
      : '';
  const untilInput = row.querySelector('[data-field=sold-out-until]');
  if (document.activeElement !== untilInput) {
    untilInput.min = toZonedInputValue(serverNow());
    untilInput.title = `Shop time (${shopTimeZone()})`;
  }
  // A new 86 may get an end; one in force is turned off first.
  row.querySelector('.until-group').hidden = soldOut;
  return row;
}

/** Sold out now: an 86 with an end stops counting at that end by itself. */
function effectiveSoldOut(entry) {
  if (!entry.soldOut) return false;
  if (entry.stock === 0) return true;
  if (entry.soldOutUntil && Date.parse(entry.soldOutUntil) <= Date.now()) return false;
  return true;
}

function buildRow(entry) {
  const id = entry.itemId;
  const name = entry.name;
  const row = h(
    'tr',
    { dataset: { itemId: id, kind: entry.kind } },
    h(
      'th',
      { scope: 'row', class: 'item-name' },
      h('span', { text: name }),
      entry.kind === 'topping' ? h('span', { class: 'badge', text: 'Topping' }) : null,
    ),
    h('td', { class: 'stock-cell' }, h('span', { class: 'stock', dataset: { role: 'stock' } })),
    h(
      'td',
      {},
      h(
        'form',
        { class: 'inline-form', dataset: { form: 'set-stock' }, novalidate: true },
        h('label', { class: 'visually-hidden', for: `stock-${id}`, text: `New count for ${name}` }),
        h('input', {
          id: `stock-${id}`,
          type: 'number',
          min: '0',
          max: '1000000',
          step: '1',
          inputmode: 'numeric',
          class: 'num-input',
          dataset: { field: 'stock' },
        }),
        h('button', {
          type: 'submit',
          class: 'btn btn-small',
          dataset: { action: 'set-stock' },
          'aria-label': `Set the count of ${name}`,
          text: 'Set',
        }),
        h('button', {
          type: 'button',
          class: 'btn btn-small btn-quiet',
          dataset: { action: 'untrack' },
          'aria-label': `Stop counting ${name} (untracked)`,
          text: 'Untrack',
        }),
      ),
    ),
    h(
      'td',
      {},
      h(
        'form',
        { class: 'inline-form', dataset: { form: 'restock' }, novalidate: true },
        h('label', { class: 'visually-hidden', for: `restock-${id}`, text: `Units to add to ${name}` }),
        h('input', {
          id: `restock-${id}`,
          type: 'number',
          min: '1',
          max: '100000',
          step: '1',
          inputmode: 'numeric',
          class: 'num-input',
          placeholder: '+',
          dataset: { field: 'restock-quantity' },
        }),
        h('button', {
          type: 'submit',
          class: 'btn btn-small',
          dataset: { action: 'restock' },
          'aria-label': `Restock ${name}`,
          text: 'Add',
        }),
        h('span', { class: 'hint', dataset: { role: 'restock-hint' }, text: 'Set a count first' }),
      ),
    ),
    h(
      'td',
      { class: 'sold-out-cell' },
      h(
        'div',
        { class: 'inline-form' },
        h(
          'button',
          {
            type: 'button',
            class: 'btn btn-small toggle',
            dataset: { action: 'toggle-sold-out' },
            'aria-pressed': 'false',
            'aria-label': `${name} sold out`,
          },
          h('span', { class: 'toggle-track', 'aria-hidden': 'true' }, h('span', { class: 'toggle-thumb' })),
          h('span', { class: 'toggle-state', 'aria-hidden': 'true' }),
        ),
        h(
          'span',
          { class: 'until-group' },
          h(
            'label',
            { for: `until-${id}`, class: 'until-label' },
            'until',
            h('span', { class: 'visually-hidden', text: ` (${name} sold out until, optional, shop time)` }),
          ),
          h('input', {
            id: `until-${id}`,
            type: 'datetime-local',
            class: 'until-input',
            dataset: { field: 'sold-out-until' },
          }),
        ),
        h('span', { class: 'until-note', dataset: { role: 'sold-out-until' } }),
      ),
    ),
  );
  row.append(
    h('td', { class: 'row-message-cell' }, h('span', { class: 'row-message', dataset: { role: 'row-message' } })),
  );
  return row;
}

$('inventory-list').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const row = form.closest('tr[data-item-id]');
  if (form.dataset.form === 'set-stock') setStock(row);
  else if (form.dataset.form === 'restock') restock(row);
});

$('inventory-list').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const row = button.closest('tr[data-item-id]');
  if (button.dataset.action === 'untrack') putEntry(row, { stock: null }, 'Now untracked: it never runs out.');
  else if (button.dataset.action === 'toggle-sold-out') toggleSoldOut(row);
});

function setStock(row) {
  const input = row.querySelector('[data-field=stock]');
  const value = input.value.trim();
  const n = Number(value);
  if (value === '' || !Number.isInteger(n) || n < 0 || n > 1_000_000) {
    rowMessage(row, 'error', 'Enter a whole number from 0 to 1,000,000.');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  putEntry(row, { stock: n }, `Count set to ${n}.`).then((ok) => {
    if (ok) input.value = '';
  });
}

function toggleSoldOut(row) {
  const entry = inventory.get(row.dataset.itemId);
  if (!entry) return;
  if (effectiveSoldOut(entry)) {
    putEntry(row, { soldOut: false }, 'Back on the menu.').then((ok) => {
      const now = inventory.get(row.dataset.itemId);
      if (ok && now && effectiveSoldOut(now))
        rowMessage(row, 'error', 'Still sold out: no stock left. Set a count or restock it.');
    });
    return;
  }
  const untilInput = row.querySelector('[data-field=sold-out-until]');
  let soldOutUntil = null;
  if (untilInput.value) {
    // What staff typed is the shop's wall clock, wherever this device's clock is set.
    const until = new Date(fromZonedInputValue(untilInput.value));
    if (Number.isNaN(until.getTime()) || until.getTime() <= serverNow()) {
      rowMessage(row, 'error', 'The end of the 86 must be in the future (or leave it empty).');
      untilInput.setAttribute('aria-invalid', 'true');
      untilInput.focus();
      return;
    }
    soldOutUntil = until.toISOString();
  }
  untilInput.removeAttribute('aria-invalid');
  const said = soldOutUntil ? `Sold out until ${formatDateTime(soldOutUntil)}.` : 'Sold out until you turn it back on.';
  putEntry(row, { soldOut: true, soldOutUntil }, said).then((ok) => {
    if (ok) untilInput.value = '';
  });
}

async function putEntry(row, body, success) {
  const itemId = row.dataset.itemId;
  const name = inventory.get(itemId)?.name || 'item';
  setRowBusy(row, true);
  try {
    const entry = await api(`${shopPath}/inventory/${encodeURIComponent(itemId)}`, { method: 'PUT', body, retries: 2 });
    storeEntry(entry);
    rowMessage(row, 'ok', success);
    announce(`${name}: ${success}`);
    return true;
  } catch (err) {
    if (err.status !== 401) {
      rowMessage(row, 'error', problemText(err));
      announce(`${name}: ${problemText(err)}`);
    }
    if (err.status === 404) refreshInventorySoon();
    return false;
  } finally {
    setRowBusy(row, false);
  }
}

async function restock(row) {
  const itemId = row.dataset.itemId;
  const entry = inventory.get(itemId);
  const input = row.querySelector('[data-field=restock-quantity]');
  const value = input.value.trim();
  const n = Number(value);
  if (value === '' || !Number.isInteger(n) || n < 1 || n > 100_000) {
    rowMessage(row, 'error', 'Enter how many units to add: 1 to 100,000.');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  // One key per intended restock: the same units on the same version of the
  // entry. Pressing again after a failed attempt resends it under the same
  // key, so it is never counted twice; once it lands, the version moves on.
  const intent = `restock:${itemId}:v${entry.version}:${n}`;
  setRowBusy(row, true);
  try {
    const updated = await api(`${shopPath}/inventory/${encodeURIComponent(itemId)}/restock`, {
      method: 'POST',
      body: { quantity: n },
      key: keys.get(intent),
      retries: 3,
    });
    keys.forget(intent);
    storeEntry(updated);
    input.value = '';
    const said = `Added ${n}: ${updated.stock} in stock.`;
    rowMessage(row, 'ok', said);
    announce(`${entry.name}: ${said}`);
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    if (err.status !== 401) {
      const again = err.retryable ? ' Press Add again to retry: it will not be counted twice.' : '';
      rowMessage(row, 'error', `${problemText(err)}${again}`);
      announce(`${entry.name}: ${problemText(err)}`);
    }
  } finally {
    setRowBusy(row, false);
  }
}

function storeEntry(entry) {
  const known = inventory.get(entry.itemId);
  if (known && known.version > entry.version) return;
  inventory.set(entry.itemId, entry);
  updateRow(entry);
}

function setRowBusy(row, busy) {
  if (busy) row.setAttribute('aria-busy', 'true');
  else row.removeAttribute('aria-busy');
  for (const b of row.querySelectorAll('button')) {
    if (busy) b.setAttribute('aria-disabled', 'true');
    else b.removeAttribute('aria-disabled');
  }
}

function rowMessage(row, kind, text) {
  const el = row.querySelector('[data-role=row-message]');
  el.dataset.kind = kind;
  el.textContent = text;
  clearTimeout(el._clear);
  if (kind === 'ok') {
    el._clear = setTimeout(() => {
      el.textContent = '';
    }, 6000);
  }
}

$('inventory-filter').addEventListener('input', applyFilter);

function applyFilter() {
  const q = $('inventory-filter').value.trim().toLowerCase();
  let shown = 0;
  for (const [id, row] of rows) {
    const entry = inventory.get(id);
    const match = !q || (entry && entry.name.toLowerCase().includes(q));
    row.hidden = !match;
    if (match) shown += 1;
  }
  $('inventory-empty').hidden = shown > 0 || rows.size === 0;
}

// ---------------------------------------------------------------- audit

async function loadAudit() {
  try {
    const { entries } = await api(`${shopPath}/audit?limit=50`, { retries: 1 });
    const unknown = entries.some((e) => e.sessionId && !sessions.has(e.sessionId));
    $('audit-list').replaceChildren(...entries.map(auditRow));
    $('audit-empty').hidden = entries.length > 0;
    if (unknown) lookUpSessions(entries);
    clearProblem('audit');
  } catch (err) {
    if (err.status !== 401) showProblem(`Could not load the audit: ${problemText(err)}`, 'audit');
  }
}

/** Table labels of sessions older than the lists: read them once. */
async function lookUpSessions(entries) {
  const ids = [...new Set(entries.map((e) => e.sessionId).filter((id) => id && !sessions.has(id)))].slice(0, 20);
  let found = false;
  for (const id of ids) {
    try {
      const s = await api(`/api/v1/sessions/${encodeURIComponent(id)}`);
      sessions.set(id, s);
      found = true;
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 401) return;
    }
  }
  if (found) {
    for (const row of $('audit-list').children) {
      const s = sessions.get(row.dataset.sessionId);
      if (s) row.querySelector('[data-role=table]').textContent = s.tableLabel;
    }
  }
}

function auditRow(e) {
  const session = e.sessionId && sessions.get(e.sessionId);
  const ok = e.status >= 200 && e.status < 300;
  return h(
    'tr',
    { dataset: { requestId: e.requestId || '', code: e.code, sessionId: e.sessionId || '' } },
    h('td', {}, h('time', { datetime: e.at, text: formatDateTime(e.at) })),
    h('td', {
      dataset: { role: 'table' },
      text: session ? session.tableLabel : e.sessionId ? e.sessionId.slice(0, 8) : '—',
    }),
    h('td', {}, h('span', { class: `code ${ok ? 'code-ok' : 'code-refused'}`, text: e.code })),
    h('td', { class: 'num', text: String(e.status) }),
    h('td', { class: 'mono', text: e.clientId || 'staff' }),
    h('td', { class: 'mono', title: e.orderId || '', text: e.orderId ? `…${e.orderId.slice(-8)}` : '—' }),
  );
}

$('audit-refresh').addEventListener('click', async () => {
  const button = $('audit-refresh');
  button.setAttribute('aria-disabled', 'true');
  await loadAudit();
  button.removeAttribute('aria-disabled');
  announce('Audit refreshed.');
});

// ---------------------------------------------------------------- misc

/** Every 30 s: ages in the tables list, and 86 marks that ran out. */
function tick() {
  if ($('app').hidden) return;
  renderSessions();
  for (const entry of inventory.values()) updateRow(entry);
}

function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
