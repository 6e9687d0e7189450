/**
 * guest.js: the table's ordering page, /t/{sessionId}#pin=123456.
 *
 * The PIN is read from the URL fragment. order-sdk.js trades it for a guest
 * token on the first call and sends the token instead from then on (also on
 * the table's event stream), so other people's wrong PINs cannot lock this
 * page out; the PIN itself goes out (X-Session-PIN, `pin` on the stream)
 * only while no token could be had. Orders go through order-sdk.js, which
 * owns the exactly-once rules (one Idempotency-Key per cart, joined double
 * taps, retries, reconciliation).
 *
 * Hooks for browser tests (stable ids and data attributes):
 *   #shop-name, #table-label        shop name, "Table T1"
 *   #live[data-state]               connecting | live | reconnecting | offline
 *                                   | closed (checked out: no more reconnects)
 *   #notice                         page-level problem (bad link, table closed,
 *                                   PIN locked), hidden when there is none;
 *                                   data-code: the problem's code, if any
 *     #retry                        "Try again" (reloads), while the PIN is locked
 *   #menu-items[aria-busy]          "false" once the menu is shown
 *   #categories a[href="#cat-N"]    category links; sections are #cat-N
 *   .item[data-item-id]             one menu item, also with
 *        [data-sold-out="true|false"] and [data-stock] (empty = untracked)
 *     button[data-action="add"][data-item-id]    its Add button (disabled and
 *                                   labelled "Sold out" when sold out)
 *     input[data-topping-id][data-item-id]       its topping checkboxes
 *                                   (at most maxToppings can be ticked)
 *     [data-role="stock"]           "Sold out" / "Only 3 left"
 *   #cart                           the cart section
 *     #cart-lines > li[data-line-key][data-item-id][data-quantity]
 *                                   a cart line (key: itemId|sorted topping ids)
 *       button[data-action="inc" | "dec" | "remove"]
 *       [data-role="qty"], [data-role="line-total"], [data-role="warning"]
 *     #cart-empty, #cart-total, #note (≤ 200 chars), #note-count
 *     #cart-problem                 why the cart cannot be sent (sold out, …)
 *     #confirm                      "Place order · $12.90"; "Sending…" with
 *                                   aria-busy="true" while a submit runs
 *     #status[data-state]           idle | sending | retrying | success | info
 *                                   | error; the text, e.g. "Order placed —
 *                                   ticket 12" or "Already placed — ticket 12"
 *     #status[data-ticket]          the ticket number after a success
 *     #order-again                  shown after "already placed": order the
 *                                   same cart once more (allowRepeat)
 *   #orders > li[data-order-id][data-order-status][data-ticket]
 *                                   the table's orders, newest first; the
 *                                   human status is in [data-role="status"]
 *   #orders-empty
 *   #cart-bar                       phone footer linking to #cart
 *   #announce                       polite live region (cart changes, order
 *                                   status changes)
 *   document.documentElement[data-ready="true"]  once the first load is done
 */

import {
  createOrderClient,
  createMenuLoader,
  getShop,
  formatMoney,
  MAX_LINES,
  MAX_QUANTITY,
  MAX_NOTE_CHARS,
} from './order-sdk.js';

const STATUS_LABELS = {
  placed: 'Sent to the kitchen',
  accepted: 'Accepted',
  preparing: 'Being prepared',
  ready: 'Ready',
  served: 'Served',
  cancelled: 'Cancelled',
};
const LOW_STOCK = 5;

const $ = (id) => document.getElementById(id);

/** A DOM element: el('li', {class: 'x', 'data-id': 1}, 'text', child). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name === 'class') node.className = value;
    else if (value === true) node.setAttribute(name, '');
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const state = {
  sessionId: null,
  pin: null,
  session: null,
  shop: null,
  menu: null,
  currency: null,
  items: new Map(), // menuItemId → item (from the menu)
  toppings: new Map(), // toppingId → {toppingId, name, price, stock, soldOut}
  renderedCatalog: null,
  selected: new Map(), // menuItemId → Set of ticked toppingIds
  cart: { lines: [], note: '' },
  orders: new Map(),
  closed: false,
  submitting: null, // the promise of the submit the page is waiting for
  lastDuplicate: null,
  menuLoading: null,
  menuDirty: false, // stock events changed the menu since it was read
  menuAgain: false,
  stockDuringLoad: [],
  expiryTimer: null,
  expiryAt: Infinity,
  stream: null,
};

let client;
let menuLoader;

// ── formatting ──────────────────────────────────────────────────────────

function money(minor) {
  const currency = state.currency ?? state.shop?.currency;
  if (!currency) return '';
  try {
    return formatMoney(minor, currency);
  } catch {
    return `${minor} ${currency}`;
  }
}

function timeOf(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  try {
    return new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', timeZone: state.shop?.timezone }).format(d);
  } catch {
    return new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(d);
  }
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function chars(text) {
  return [...text].length;
}

// ── messages ────────────────────────────────────────────────────────────

function setStatus(kind, text, extra = {}) {
  const box = $('status');
  box.setAttribute('aria-live', kind === 'error' ? 'assertive' : 'polite');
  box.dataset.state = kind;
  if (extra.ticket != null) box.dataset.ticket = String(extra.ticket);
  else delete box.dataset.ticket;
  box.textContent = text;
}

function announce(text) {
  const region = $('announce');
  region.textContent = '';
  // A fresh text node after a tick makes screen readers repeat equal texts.
  setTimeout(() => { region.textContent = text; }, 50);
}

function showNotice(kind, text, code = null) {
  const n = $('notice');
  n.className = `notice notice-${kind}`;
  n.textContent = text;
  if (code) n.dataset.code = code;
  else delete n.dataset.code;
  n.hidden = false;
}

function fatal(text, { kind = 'error', code = null } = {}) {
  showNotice(kind, text, code);
  // The page stops before it learns the shop or opens the stream.
  $('live').hidden = true;
  $('shop-name').textContent = 'Your table';
  $('menu-items').replaceChildren(el('p', { class: 'muted' }, 'The menu cannot be shown.'));
  $('menu-items').setAttribute('aria-busy', 'false');
  state.closed = true;
  renderCart();
  document.documentElement.dataset.ready = 'true';
}

/** Retry-After as "3 minutes" (rounded up; at least one). */
function minutes(err) {
  return plural(Math.max(1, Math.ceil((err?.retryAfter ?? 60) / 60)), 'minute', 'minutes');
}

function problemText(err) {
  switch (err?.code) {
    case 'PIN_INVALID':
      return 'This table link is not valid any more. Please scan the QR code on your table again.';
    case 'PIN_LOCKED':
      // The lock may be the table's or the whole network's (the problem
      // does not say which), so the text holds for both.
      return `Too many wrong PIN attempts were made, so the table cannot be opened right now. Try again in ${minutes(err)}, or ask the staff for help.`;
    case 'SESSION_RATE_LIMITED':
      return `This table has sent a lot of orders in a short time. You can order again in ${minutes(err)}; the staff can also take your order.`;
    case 'SESSION_CLOSED':
      return 'This table has been checked out. Thank you for your visit! Ordering is closed.';
    case 'NOT_FOUND':
      return 'This table could not be found. Please scan the QR code on your table again.';
    case 'CATALOG_NOT_READY':
      return 'The menu is not ready yet. Please try again in a moment or ask the staff.';
    case 'NETWORK_ERROR':
    case 'TIMEOUT':
      return 'The restaurant cannot be reached right now. Check your connection; the page keeps trying.';
    default:
      return err?.message || 'Something went wrong.';
  }
}

// ── the session ─────────────────────────────────────────────────────────

function setClosed() {
  if (state.closed) return;
  state.closed = true;
  // The server ends the stream at checkout; nothing would come any more.
  state.stream?.close();
  setLive('closed');
  showNotice('warning', problemText({ code: 'SESSION_CLOSED' }), 'SESSION_CLOSED');
  saveCart(); // a closed table's cart is not kept
  updateAvailability();
  renderCart();
}

function setLive(status) {
  const live = $('live');
  live.dataset.state = status;
  live.textContent = {
    live: 'Live',
    reconnecting: 'Reconnecting…',
    offline: 'Offline, retrying…',
    connecting: 'Connecting…',
    closed: 'Closed',
  }[status] ?? status;
}

// ── the menu ────────────────────────────────────────────────────────────

async function refreshMenu() {
  if (state.menuLoading) {
    state.menuAgain = true;
    return state.menuLoading;
  }
  state.stockDuringLoad = [];
  state.menuLoading = (async () => {
    try {
      const { menu, changed } = await menuLoader.load();
      // A 304 means the server's menu equals the last one read; if events
      // changed our copy since, that copy is what is out of date.
      const adopt = changed || state.menuDirty;
      if (adopt) adoptMenu(menu);
      // Stock events that arrived while the menu was read may be newer.
      const late = state.stockDuringLoad;
      state.stockDuringLoad = [];
      for (const ev of late) applyStock(ev, { render: false, replay: true });
      if (adopt || late.length) {
        if (state.renderedCatalog !== catalogSignature(menu)) renderMenu();
        else updateAvailability();
        renderCart();
        renderOrders();
      }
      if ($('notice').dataset.source === 'menu') {
        $('notice').hidden = true;
        delete $('notice').dataset.source;
      }
    } catch (err) {
      if (!state.menu) {
        $('menu-items').replaceChildren(el('p', { class: 'muted' }, problemText(err)));
        $('menu-items').setAttribute('aria-busy', 'false');
      }
      if (err?.code === 'CATALOG_NOT_READY') {
        showNotice('warning', problemText(err));
        $('notice').dataset.source = 'menu';
      }
    } finally {
      state.menuLoading = null;
      state.stockDuringLoad = [];
    }
    if (state.menuAgain) {
      state.menuAgain = false;
      await refreshMenu();
    }
  })();
  return state.menuLoading;
}

function catalogSignature(menu) {
  return `${menu.shopId}|${menu.catalogVersion}|${menu.currency}`;
}

function adoptMenu(menu) {
  state.menuDirty = false;
  state.menu = menu;
  state.currency = menu.currency;
  state.items = new Map(menu.items.map((item) => [item.menuItemId, item]));
  state.toppings = new Map();
  for (const item of menu.items) {
    for (const t of item.toppings ?? []) state.toppings.set(t.toppingId, t);
  }
  // The same topping appears under several items: keep one object per id.
  for (const item of menu.items) {
    item.toppings = (item.toppings ?? []).map((t) => state.toppings.get(t.toppingId));
  }
}

function applyStock(ev, { render = true, replay = false } = {}) {
  if (!ev || !ev.itemId) return;
  if (state.menuLoading && !replay) state.stockDuringLoad.push(ev);
  const target = state.items.get(ev.itemId) ?? state.toppings.get(ev.itemId);
  if (target) {
    state.menuDirty = true;
    target.stock = ev.stock ?? null;
    target.soldOut = Boolean(ev.soldOut);
  }
  if (ev.soldOut && ev.soldOutUntil) scheduleExpiry(Date.parse(ev.soldOutUntil));
  if (render) {
    updateAvailability();
    renderCart();
  }
}

/** A manual 86 lapses with no event: read the menu again when it does. */
function scheduleExpiry(at) {
  if (Number.isNaN(at) || at >= state.expiryAt) return;
  clearTimeout(state.expiryTimer);
  state.expiryAt = at;
  state.expiryTimer = setTimeout(() => {
    state.expiryAt = Infinity;
    state.expiryTimer = null;
    refreshMenu();
  }, Math.max(0, at - Date.now()) + 1000);
}

function renderMenu() {
  const menu = state.menu;
  const focus = focusedMenuControl();
  const byCategory = new Map();
  for (const item of menu.items) {
    if (!byCategory.has(item.category)) byCategory.set(item.category, []);
    byCategory.get(item.category).push(item);
  }
  const chips = [];
  const sections = [];
  let c = 0;
  for (const [category, items] of byCategory) {
    const id = `cat-${c++}`;
    chips.push(el('a', { href: `#${id}` }, category));
    sections.push(el('section', { class: 'category', id, 'aria-labelledby': `${id}-title` },
      el('h3', { id: `${id}-title` }, category),
      el('ul', { class: 'items' }, items.map(renderItem))));
  }
  $('categories').replaceChildren(...chips);
  if (sections.length === 0) sections.push(el('p', { class: 'muted' }, 'The menu is empty for now.'));
  $('menu-items').replaceChildren(...sections);
  $('menu-items').setAttribute('aria-busy', 'false');
  state.renderedCatalog = catalogSignature(menu);
  // Ticks on toppings that no longer exist are dropped.
  for (const [itemId, ticked] of state.selected) {
    const item = state.items.get(itemId);
    if (!item) { state.selected.delete(itemId); continue; }
    for (const t of ticked) if (!item.toppings.some((x) => x.toppingId === t)) ticked.delete(t);
  }
  updateAvailability();
  restoreMenuFocus(focus);
}

function renderItem(item) {
  const nameId = `item-${item.menuItemId}-name`;
  const ticked = state.selected.get(item.menuItemId) ?? new Set();
  const offered = item.maxToppings > 0 ? item.toppings : [];
  let toppings = null;
  if (offered.length > 0) {
    const rule = item.maxToppings < offered.length
      ? `choose up to ${item.maxToppings}`
      : 'optional';
    toppings = el('fieldset', { class: 'toppings' },
      el('legend', {}, 'Toppings ', el('span', { class: 'muted' }, `(${rule})`)),
      offered.map((t) => {
        const inputId = `opt-${item.menuItemId}-${t.toppingId}`;
        return el('label', { class: 'check', for: inputId, 'data-topping-label': t.toppingId },
          el('input', {
            type: 'checkbox',
            id: inputId,
            'data-item-id': item.menuItemId,
            'data-topping-id': t.toppingId,
            checked: ticked.has(t.toppingId),
          }),
          el('span', { 'data-role': 'topping-name' }, t.name),
          el('span', { class: 'topping-price' }, `+${money(t.price)}`));
      }));
  }
  return el('li', { class: 'item', 'data-item-id': item.menuItemId, 'aria-labelledby': nameId },
    el('div', { class: 'item-head' },
      el('h4', { class: 'item-name', id: nameId }, item.name),
      el('span', { class: 'price' }, money(item.price))),
    item.description ? el('p', { class: 'item-desc' }, item.description) : null,
    el('p', { class: 'item-stock', 'data-role': 'stock', hidden: true }),
    toppings,
    el('div', { class: 'item-foot' },
      el('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'add', 'data-item-id': item.menuItemId },
        'Add')));
}

/** Sold-out marks, stock hints and topping limits, without rebuilding. */
function updateAvailability() {
  for (const node of document.querySelectorAll('#menu-items .item[data-item-id]')) {
    const item = state.items.get(node.dataset.itemId);
    if (!item) continue;
    const soldOut = Boolean(item.soldOut);
    node.dataset.soldOut = String(soldOut);
    node.dataset.stock = item.stock == null ? '' : String(item.stock);
    const hint = node.querySelector('[data-role="stock"]');
    if (soldOut) {
      hint.replaceChildren(el('span', { class: 'badge badge-danger' }, 'Sold out'));
      hint.hidden = false;
    } else if (item.stock != null && item.stock <= LOW_STOCK) {
      hint.replaceChildren(el('span', { class: 'badge badge-warning' }, `Only ${item.stock} left`));
      hint.hidden = false;
    } else {
      hint.replaceChildren();
      hint.hidden = true;
    }
    const add = node.querySelector('[data-action="add"]');
    add.disabled = soldOut || state.closed;
    add.textContent = soldOut ? 'Sold out' : 'Add';
    add.setAttribute('aria-label', soldOut ? `${item.name}: sold out` : `Add ${item.name}`);

    const ticked = state.selected.get(item.menuItemId) ?? new Set();
    for (const box of node.querySelectorAll('input[data-topping-id]')) {
      const t = state.toppings.get(box.dataset.toppingId);
      if (t?.soldOut && ticked.has(t.toppingId)) ticked.delete(t.toppingId);
      box.checked = ticked.has(box.dataset.toppingId);
    }
    const full = ticked.size >= item.maxToppings;
    for (const box of node.querySelectorAll('input[data-topping-id]')) {
      const t = state.toppings.get(box.dataset.toppingId);
      const unavailable = !t || t.soldOut;
      box.disabled = soldOut || state.closed || unavailable || (full && !box.checked);
      const label = box.closest('label');
      label.dataset.unavailable = String(box.disabled);
      const name = label.querySelector('[data-role="topping-name"]');
      name.textContent = unavailable ? `${t?.name ?? ''} (sold out)` : (t?.name ?? '');
    }
  }
}

function focusedMenuControl() {
  const a = document.activeElement;
  if (!a || !$('menu-items').contains(a)) return null;
  return { action: a.dataset.action, itemId: a.dataset.itemId, toppingId: a.dataset.toppingId };
}

function restoreMenuFocus(f) {
  if (!f) return;
  let sel = null;
  if (f.toppingId) sel = `input[data-topping-id="${CSS.escape(f.toppingId)}"][data-item-id="${CSS.escape(f.itemId)}"]`;
  else if (f.action && f.itemId) sel = `[data-action="${CSS.escape(f.action)}"][data-item-id="${CSS.escape(f.itemId)}"]`;
  const target = sel && document.querySelector(sel);
  if (target) target.focus();
}

function onToppingChange(box) {
  const itemId = box.dataset.itemId;
  if (!state.selected.has(itemId)) state.selected.set(itemId, new Set());
  const ticked = state.selected.get(itemId);
  const item = state.items.get(itemId);
  if (box.checked) {
    if (item && ticked.size >= item.maxToppings) {
      box.checked = false;
      announce(`You can choose up to ${item.maxToppings} toppings.`);
    } else {
      ticked.add(box.dataset.toppingId);
    }
  } else {
    ticked.delete(box.dataset.toppingId);
  }
  updateAvailability();
}

// ── the cart ────────────────────────────────────────────────────────────

function lineKey(line) {
  return `${line.menuItemId}|${[...line.toppingIds].sort().join(',')}`;
}

function cartStorageKey() {
  return `ordergate.cart.${state.sessionId}`;
}

/** Carts of other tables left over from earlier visits (older than a day). */
function purgeOldCarts() {
  try {
    const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const key = localStorage.key(i);
      if (!key?.startsWith('ordergate.cart.') || key === cartStorageKey()) continue;
      let at = 0;
      try { at = JSON.parse(localStorage.getItem(key))?.at ?? 0; } catch { /* damaged: drop */ }
      if (!(at > dayAgo)) localStorage.removeItem(key);
    }
  } catch { /* storage blocked */ }
}

function loadCart() {
  purgeOldCarts();
  try {
    const saved = JSON.parse(localStorage.getItem(cartStorageKey()) ?? 'null');
    if (saved && Array.isArray(saved.lines)) {
      state.cart.lines = saved.lines
        .filter((l) => l && typeof l.menuItemId === 'string' && Number.isInteger(l.quantity)
          && l.quantity >= 1 && l.quantity <= MAX_QUANTITY && Array.isArray(l.toppingIds))
        .slice(0, MAX_LINES)
        .map((l) => ({ menuItemId: l.menuItemId, toppingIds: l.toppingIds.map(String).sort(), quantity: l.quantity }));
      state.cart.note = typeof saved.note === 'string' ? saved.note.slice(0, MAX_NOTE_CHARS) : '';
    }
  } catch { /* no saved cart */ }
  $('note').value = state.cart.note;
}

function saveCart() {
  try {
    if (state.closed || (state.cart.lines.length === 0 && !state.cart.note)) localStorage.removeItem(cartStorageKey());
    else localStorage.setItem(cartStorageKey(), JSON.stringify({ ...state.cart, at: Date.now() }));
  } catch { /* storage full or blocked: the cart lives in memory */ }
}

function unitPrice(line) {
  const item = state.items.get(line.menuItemId);
  if (!item) return null;
  let price = item.price;
  for (const id of line.toppingIds) price += state.toppings.get(id)?.price ?? 0;
  return price;
}

function lineName(line) {
  return state.items.get(line.menuItemId)?.name ?? 'Unavailable dish';
}

function toppingNames(ids) {
  return ids.map((id) => state.toppings.get(id)?.name ?? 'unavailable topping');
}

/** Why each line cannot be ordered as it is (lineKey → text). */
function cartProblems() {
  const problems = new Map();
  if (!state.menu) return problems;
  const demand = new Map();
  for (const line of state.cart.lines) {
    for (const id of [line.menuItemId, ...line.toppingIds]) demand.set(id, (demand.get(id) ?? 0) + line.quantity);
  }
  for (const line of state.cart.lines) {
    const key = lineKey(line);
    const item = state.items.get(line.menuItemId);
    if (!item) { problems.set(key, 'No longer on the menu. Please remove it.'); continue; }
    if (item.soldOut) { problems.set(key, 'Sold out. Please remove it.'); continue; }
    if (line.toppingIds.length > item.maxToppings) {
      problems.set(key, `At most ${item.maxToppings} toppings.`);
      continue;
    }
    const gone = line.toppingIds.find((id) => !item.toppings.some((t) => t.toppingId === id));
    if (gone) { problems.set(key, 'A topping is no longer offered. Please remove this line.'); continue; }
    const soldOutTopping = line.toppingIds.map((id) => state.toppings.get(id)).find((t) => t?.soldOut);
    if (soldOutTopping) { problems.set(key, `${soldOutTopping.name} is sold out. Please remove this line.`); continue; }
    for (const id of [line.menuItemId, ...line.toppingIds]) {
      const thing = state.items.get(id) ?? state.toppings.get(id);
      if (thing?.stock != null && demand.get(id) > thing.stock) {
        problems.set(key, `Only ${thing.stock} ${thing.name} left. Please order fewer.`);
        break;
      }
    }
  }
  return problems;
}

function addToCart(itemId) {
  const item = state.items.get(itemId);
  if (!item || item.soldOut || state.closed) return;
  const toppingIds = [...(state.selected.get(itemId) ?? [])]
    .filter((id) => item.toppings.some((t) => t.toppingId === id) && !state.toppings.get(id)?.soldOut)
    .sort();
  const line = { menuItemId: itemId, toppingIds, quantity: 1 };
  const existing = state.cart.lines.find((l) => lineKey(l) === lineKey(line));
  if (existing) {
    if (existing.quantity >= MAX_QUANTITY) {
      announce(`You can order at most ${MAX_QUANTITY} of the same dish at once.`);
      return;
    }
    existing.quantity += 1;
  } else {
    if (state.cart.lines.length >= MAX_LINES) {
      announce(`An order can have at most ${MAX_LINES} different dishes.`);
      return;
    }
    state.cart.lines.push(line);
  }
  state.selected.delete(itemId);
  updateAvailability();
  cartChanged();
  const extras = toppingIds.length ? ` with ${toppingNames(toppingIds).join(', ')}` : '';
  const count = state.cart.lines.reduce((n, l) => n + l.quantity, 0);
  announce(`Added ${item.name}${extras}. ${plural(count, 'dish', 'dishes')} in your order.`);
}

function changeLine(key, action) {
  const i = state.cart.lines.findIndex((l) => lineKey(l) === key);
  if (i < 0) return;
  const line = state.cart.lines[i];
  const name = lineName(line);
  if (action === 'inc') {
    if (line.quantity < MAX_QUANTITY) line.quantity += 1;
    announce(`${name}: ${line.quantity}`);
  } else if (action === 'dec' && line.quantity > 1) {
    line.quantity -= 1;
    announce(`${name}: ${line.quantity}`);
  } else {
    state.cart.lines.splice(i, 1);
    announce(`Removed ${name} from your order.`);
  }
  cartChanged();
}

function cartChanged() {
  saveCart();
  $('order-again').hidden = true;
  state.lastDuplicate = null;
  renderCart();
}

function renderCart() {
  const focus = focusedCartControl();
  const problems = cartProblems();
  const lines = state.cart.lines;
  let total = 0;
  const nodes = lines.map((line) => {
    const key = lineKey(line);
    const price = unitPrice(line);
    if (price != null) total += price * line.quantity;
    const name = lineName(line);
    const problem = problems.get(key);
    return el('li', {
      class: 'cart-line', 'data-line-key': key, 'data-item-id': line.menuItemId, 'data-quantity': line.quantity,
    },
    el('div', {},
      el('span', { class: 'line-name' }, name),
      line.toppingIds.length ? el('span', { class: 'line-toppings' }, `+ ${toppingNames(line.toppingIds).join(', ')}`) : null),
    el('span', { class: 'line-total', 'data-role': 'line-total' }, price == null ? '' : money(price * line.quantity)),
    el('div', { class: 'line-controls' },
      el('div', { class: 'qty', role: 'group', 'aria-label': `Quantity of ${name}` },
        el('button', {
          type: 'button', class: 'btn', 'data-action': 'dec',
          'aria-label': line.quantity > 1 ? `One less ${name}` : `Remove ${name}`,
        }, '−'),
        el('span', { class: 'qty-value', 'data-role': 'qty' }, String(line.quantity)),
        el('button', {
          type: 'button', class: 'btn', 'data-action': 'inc', 'aria-label': `One more ${name}`,
          disabled: line.quantity >= MAX_QUANTITY,
        }, '+')),
      el('button', { type: 'button', class: 'btn-link', 'data-action': 'remove', 'aria-label': `Remove ${name}` }, 'Remove')),
    problem ? el('p', { class: 'line-warning', 'data-role': 'warning' }, problem) : null);
  });
  $('cart-lines').replaceChildren(...nodes);
  const count = lines.reduce((n, l) => n + l.quantity, 0);
  $('cart-empty').hidden = lines.length > 0;
  $('cart-summary').hidden = lines.length === 0;
  $('cart-total').textContent = money(total);

  const blocked = problems.size > 0;
  const cartProblem = $('cart-problem');
  cartProblem.hidden = !blocked;
  cartProblem.textContent = blocked ? 'Some dishes cannot be ordered as they are. See the notes above.' : '';

  const confirm = $('confirm');
  const sending = state.submitting !== null;
  confirm.disabled = state.closed || (!sending && (lines.length === 0 || blocked || !state.menu));
  confirm.setAttribute('aria-busy', String(sending));
  confirm.textContent = sending
    ? 'Sending…'
    : lines.length ? `Place order · ${money(total)}` : 'Place order';

  const navCount = $('nav-cart-count');
  navCount.hidden = count === 0;
  navCount.textContent = String(count);
  $('cart-bar-count').textContent = plural(count, 'dish', 'dishes');
  $('cart-bar-total').textContent = money(total);
  updateCartBar();
  restoreCartFocus(focus);
}

function focusedCartControl() {
  const a = document.activeElement;
  if (!a || !$('cart-lines').contains(a)) return null;
  const li = a.closest('[data-line-key]');
  const index = [...$('cart-lines').children].indexOf(li);
  return { key: li?.dataset.lineKey, action: a.dataset.action, index };
}

function restoreCartFocus(f) {
  if (!f) return;
  const rows = [...$('cart-lines').children];
  const row = rows.find((r) => r.dataset.lineKey === f.key) ?? rows[Math.min(f.index, rows.length - 1)];
  const target = row?.querySelector(`[data-action="${f.action}"]:not(:disabled)`)
    ?? row?.querySelector('[data-action="remove"]');
  if (target) target.focus();
  else $('cart').focus();
}

let cartInView = false;
function updateCartBar() {
  $('cart-bar').hidden = state.cart.lines.length === 0 || cartInView || state.closed;
}

// ── placing the order ───────────────────────────────────────────────────

function requestFrom(lines, note) {
  return {
    items: lines.map((l) => ({ menuItemId: l.menuItemId, quantity: l.quantity, toppingIds: [...l.toppingIds] })),
    note,
  };
}

async function placeOrder({ repeat = null } = {}) {
  if (state.closed) return;
  const lines = repeat ? repeat.lines : state.cart.lines;
  const note = repeat ? repeat.note : state.cart.note.trim();
  if (!repeat) {
    if (lines.length === 0) return;
    if (cartProblems().size > 0) {
      setStatus('error', 'Some dishes in your order cannot be served as they are. Please check the notes in your order.');
      return;
    }
  }
  const sent = { lines: lines.map((l) => ({ ...l, toppingIds: [...l.toppingIds] })), note };
  const promise = client.submit(requestFrom(sent.lines, note), { allowRepeat: Boolean(repeat) });
  // A tap while the same cart is being sent joins it: the first tap's
  // handler reports the outcome.
  if (promise === state.submitting) return;
  // Otherwise a new submit starts, unless the SDK refused it (ORDER_PENDING).
  if (state.submitting === null) {
    state.submitting = promise;
    setStatus('sending', 'Sending…');
    renderCart();
  }
  try {
    const result = await promise;
    if (!repeat) removeSent(sent);
    upsertOrder(result.order);
    const ticket = result.order?.ticketNumber;
    if (result.alreadyPlaced) {
      setStatus('success', `Already placed — ticket ${ticket}. It is with the kitchen; nothing was ordered twice.`, { ticket });
      state.lastDuplicate = sent;
      $('order-again').hidden = false;
    } else {
      setStatus('success', `Order placed — ticket ${ticket}`, { ticket });
      $('order-again').hidden = true;
    }
  } catch (err) {
    handleOrderError(err);
  } finally {
    if (state.submitting === promise) {
      state.submitting = null;
      renderCart();
    }
  }
}

/** Takes what was ordered out of the cart (dishes added meanwhile stay). */
function removeSent(sent) {
  for (const s of sent.lines) {
    const line = state.cart.lines.find((l) => lineKey(l) === lineKey(s));
    if (line) line.quantity -= s.quantity;
  }
  state.cart.lines = state.cart.lines.filter((l) => l.quantity > 0);
  if (state.cart.note.trim() === sent.note) {
    state.cart.note = '';
    $('note').value = '';
    updateNoteCount();
  }
  saveCart();
  renderCart();
}

function handleOrderError(err) {
  switch (err?.code) {
    case 'ORDER_PENDING':
      setStatus('info', 'Your previous order is still being sent. Wait a moment, then tap “Place order” again.');
      break;
    case 'NOT_CONFIRMED':
      setStatus('error', 'We could not confirm your order: the connection seems to be down. '
        + 'Your order is still here. Tap “Place order” again when you are back online: it will not be sent twice.');
      break;
    case 'OUT_OF_STOCK': {
      const parts = (err.shortages ?? []).map((s) => {
        const thing = state.items.get(s.itemId) ?? state.toppings.get(s.itemId);
        const name = thing?.name ?? 'An item';
        return s.available > 0 ? `${name} (only ${s.available} left)` : `${name} (sold out)`;
      });
      setStatus('error', `Sorry, not enough left: ${parts.join(', ') || 'some dishes'}. Please change your order.`);
      refreshMenu();
      break;
    }
    case 'SESSION_CLOSED':
      setStatus('error', 'This table has been checked out, so no more orders can be placed.');
      setClosed();
      break;
    case 'UNKNOWN_MENU_ITEM':
    case 'ITEM_UNAVAILABLE':
    case 'INVALID_TOPPING':
    case 'VALIDATION_FAILED':
      setStatus('error', 'Part of your order is no longer on the menu. The menu has been updated; please check your order.');
      refreshMenu();
      break;
    case 'PIN_INVALID':
    case 'PIN_LOCKED':
    case 'SESSION_RATE_LIMITED':
    case 'CATALOG_NOT_READY':
      setStatus('error', problemText(err));
      break;
    case 'INVALID_CART':
      setStatus('error', err.message);
      break;
    default:
      setStatus('error', `Your order was not placed: ${err?.message ?? 'unknown error'} You can try again safely.`);
  }
}

function onProgress(ev) {
  if (state.submitting === null) return;
  if (ev.phase === 'waiting') {
    setStatus('retrying', 'Still sending… the connection is slow, trying again.');
  } else if (ev.phase === 'reconciling') {
    setStatus('retrying', 'Checking whether your order reached the kitchen…');
  }
}

// ── the table's orders ──────────────────────────────────────────────────

async function refreshOrders() {
  try {
    const orders = await client.listOrders({ limit: 50 });
    for (const o of orders) upsertOrder(o, { quiet: true, render: false });
    renderOrders();
  } catch { /* the stream still brings updates; the next reconnect retries */ }
}

function upsertOrder(order, { quiet = false, render = true } = {}) {
  if (!order?.orderId || (order.sessionId && order.sessionId !== state.sessionId)) return;
  const known = state.orders.get(order.orderId);
  if (known && (known.version ?? 0) > (order.version ?? 0)) return;
  state.orders.set(order.orderId, order);
  if (!quiet && known && known.status !== order.status) {
    announce(`Ticket ${order.ticketNumber}: ${STATUS_LABELS[order.status] ?? order.status}.`);
  }
  if (render) renderOrders();
}

function renderOrder(o) {
  const lines = (o.items ?? []).map((l) => el('li', {},
    `${l.quantity} × ${l.name}`,
    l.toppings?.length ? ` (+ ${l.toppings.map((t) => t.name).join(', ')})` : ''));
  const meta = [timeOf(o.createdAt), money(o.total), o.note ? `“${o.note}”` : ''].filter(Boolean).join(' · ');
  return el('li', {
    class: 'order', 'data-order-id': o.orderId, 'data-order-status': o.status, 'data-ticket': o.ticketNumber,
  },
  el('div', { class: 'order-head' },
    el('span', { class: 'ticket' }, `Ticket ${o.ticketNumber}`),
    el('span', { class: 'status-badge', 'data-status': o.status, 'data-role': 'status' },
      STATUS_LABELS[o.status] ?? o.status)),
  el('ul', { class: 'order-lines' }, lines),
  el('p', { class: 'order-meta' }, meta));
}

function renderOrders() {
  const orders = [...state.orders.values()].sort((a, b) =>
    String(b.createdAt).localeCompare(String(a.createdAt)) || (b.ticketNumber ?? 0) - (a.ticketNumber ?? 0));
  $('orders').replaceChildren(...orders.map(renderOrder));
  $('orders-empty').hidden = orders.length > 0;
}

// ── wiring ──────────────────────────────────────────────────────────────

function updateNoteCount() {
  const n = chars($('note').value);
  $('note-count').textContent = `${n} / ${MAX_NOTE_CHARS}`;
}

function wire() {
  $('menu-items').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-action="add"]');
    if (button && !button.disabled) addToCart(button.dataset.itemId);
  });
  $('menu-items').addEventListener('change', (e) => {
    if (e.target.matches('input[data-topping-id]')) onToppingChange(e.target);
  });
  $('cart-lines').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-action]');
    const row = button?.closest('[data-line-key]');
    if (button && row && !button.disabled) changeLine(row.dataset.lineKey, button.dataset.action);
  });
  $('note').addEventListener('input', () => {
    state.cart.note = $('note').value;
    updateNoteCount();
    saveCart();
  });
  $('confirm').addEventListener('click', () => { placeOrder(); });
  $('order-again').addEventListener('click', () => {
    const repeat = state.lastDuplicate;
    if (!repeat) return;
    $('order-again').hidden = true;
    state.lastDuplicate = null;
    placeOrder({ repeat });
  });
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((entries) => {
      cartInView = entries.some((e) => e.isIntersecting);
      updateCartBar();
    }, { threshold: 0.1 }).observe($('cart'));
  }
  document.addEventListener('visibilitychange', () => {
    // Phones freeze background tabs: catch up when the guest comes back.
    if (document.visibilityState === 'visible' && state.menu) {
      refreshMenu();
      refreshOrders();
    }
  });
}

function parseLocation() {
  const m = /^\/t\/([^/]+)\/?$/.exec(location.pathname);
  const sessionId = m ? decodeURIComponent(m[1]) : null;
  const pin = new URLSearchParams(location.hash.replace(/^#/, '')).get('pin');
  return { sessionId, pin };
}

async function main() {
  const { sessionId, pin } = parseLocation();
  state.sessionId = sessionId;
  state.pin = pin;
  wire();
  updateNoteCount();
  if (!sessionId || !pin || !/^\d{6}$/.test(pin)) {
    fatal('This page needs the full link from the QR code on your table. Please scan it again.');
    return;
  }
  loadCart();
  updateNoteCount();
  client = createOrderClient({ sessionId, pin, onProgress });
  renderCart();

  let session;
  try {
    session = await client.getSession();
  } catch (err) {
    fatal(problemText(err), { kind: err?.code === 'SESSION_CLOSED' ? 'warning' : 'error', code: err?.code });
    // A lock lapses, or staff lift it: the guest can try again from here.
    if (err?.code === 'PIN_LOCKED') {
      const retry = el('button', { type: 'button', id: 'retry', class: 'btn btn-secondary' }, 'Try again');
      retry.addEventListener('click', () => location.reload());
      $('notice').append(' ', retry);
    }
    return;
  }
  state.session = session;
  $('table-label').textContent = `Table ${session.tableLabel}`;
  document.title = `Table ${session.tableLabel}: order`;
  if (session.status === 'closed') setClosed();

  menuLoader = createMenuLoader({ shopId: session.shopId });
  if (!state.closed) {
    state.stream = client.subscribeEvents({
      onStatus: setLive,
      // The table's session.closed event, or a checkout the stream missed.
      onEnd: (err) => {
        if (err.code === 'SESSION_CLOSED') setClosed();
        else showNotice('error', problemText(err), err.code);
      },
      // Every (re)connection: catch up on what the stream could not replay
      // (a lapsed 86, changes while the menu was first read).
      onOpen: () => { refreshMenu(); refreshOrders(); },
      onEvent: (type, data) => {
        if (type === 'stock.changed') applyStock(data);
        else if (type === 'order.placed' || type === 'order.updated') upsertOrder(data);
      },
    });
  }

  const shop = getShop({ shopId: session.shopId })
    .then((s) => {
      state.shop = s;
      $('shop-name').textContent = s.name;
      document.title = `${s.name}: table ${session.tableLabel}`;
    })
    .catch(() => { $('shop-name').textContent = 'Your table'; });
  await Promise.all([shop, refreshMenu(), refreshOrders()]);
  renderCart();
  renderOrders();
  document.documentElement.dataset.ready = 'true';
}

main();
