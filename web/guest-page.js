// guest-page.js: what the guest page's modules share: the page's state,
// its texts (t, through the translator of the language shown), money and
// time in that language, and the page-level notices and status.

import { formatMoney } from './order-sdk.js';
import { createTranslator } from './i18n.js';
import { emptyFilter, itemBlockedByOptions } from './menu-rules.js';
import { $ } from './guest-dom.js';

export const LOW_STOCK = 5;

export const state = {
  sessionId: null,
  pin: null,
  // Opened from a permanent table card (/q/{code}): its code, and the
  // table's name as the card told it (before the session is read).
  tableCode: null,
  tableName: null,
  session: null,
  shop: null,
  menu: null,
  currency: null,
  lang: 'en',
  languages: ['en'], // what the shop offers
  items: new Map(), // menuItemId → item (from the menu)
  toppings: new Map(), // toppingId → {toppingId, name, price, stock, soldOut}
  options: new Map(), // optionId → {option, group, item}
  renderedCatalog: null,
  selected: new Map(), // menuItemId → Set of ticked toppingIds (inline toppings)
  filter: emptyFilter(),
  cart: { lines: [], note: '' },
  orders: new Map(),
  closed: false,
  accessEnded: false, // closed because the token was refused with no PIN to trade in (not checked out)
  submitting: null, // the promise of the submit the page is waiting for
  // The cart of a submit whose outcome is unknown (NOT_CONFIRMED): sent
  // again, with its key, once the connection is back ({lines, note,
  // allowRepeat, fromCart}); kept with the cart across a reload.
  unconfirmed: null,
  resumeTimer: null,
  resumeRounds: 0, // automatic resends in a row that could not confirm either
  lastPlaced: null, // {orderId, ticket}: the order this page placed last; #status follows it
  lastDuplicate: null,
  menuLoading: null,
  menuDirty: false, // stock events changed the menu since it was read
  menuAgain: false,
  stockDuringLoad: [],
  expiryTimer: null,
  expiryAt: Infinity,
  stream: null,
  client: null, // order-sdk's order client
  menuLoader: null,
  sheet: null, // the item sheet (guest-sheet.js)
  // Calling staff and asking for the bill (guest-service.js): kind → the
  // table's request of that kind as last heard {requestId, kind, status,
  // createdAt, seenAt}, kept per table in sessionStorage.
  service: {},
  waitMinutes: null, // the kitchen's current pace (guest-wait.js), null: no estimate
};

/**
 * What the modules call back into guest.js for (set there):
 *   menuChanged()  the menu or its stock changed: the cart, the orders and
 *                  the sheet follow
 *   setClosed()    the table was checked out
 *   setAccessEnded()  the guest token was refused and there is no PIN to
 *                  trade in for a new one
 *   languagesChanged()  the menu named the shop's languages
 *   statusChanged()  the status box changed (the wait estimate moves
 *                  between it and the Place order button)
 */
export const hooks = {
  menuChanged: () => {},
  setClosed: () => {},
  setAccessEnded: () => {},
  languagesChanged: () => {}, // the menu named the shop's languages
  statusChanged: () => {}, // #status tells about something else now
};

let translator = createTranslator('en', []);

/** The page's text for `key` in the language shown (see i18n.js). */
export function t(key, params) {
  return translator(key, params);
}
t.has = (key) => translator.has(key);

export function setTranslator(next) {
  translator = next;
}

export function money(minor) {
  const currency = state.currency ?? state.shop?.currency;
  if (!currency) return '';
  try {
    return formatMoney(minor, currency, state.lang);
  } catch {
    return `${minor} ${currency}`;
  }
}

export function timeOf(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const opts = { hour: 'numeric', minute: '2-digit' };
  for (const attempt of [[state.lang, { ...opts, timeZone: state.shop?.timezone }], [state.lang, opts], [undefined, opts]]) {
    try { return new Intl.DateTimeFormat(...attempt).format(d); } catch { /* next */ }
  }
  return '';
}

export function dishes(n) {
  return t('cart.dishes', { n });
}

/** Names in a row: "Medium rare, Fries" / "ミディアムレア、ポテト". */
export function list(parts) {
  return parts.join(t('list.separator'));
}

/** Whether an item cannot be ordered now (its own stock, or a required group with too few options left). */
export function itemSoldOut(item) {
  return Boolean(item?.soldOut) || itemBlockedByOptions(item);
}

/** "Doneness: choose one" for a group chosen too few times. */
export function chooseText(group) {
  const min = group.minChoices ?? 1;
  return min === 1 ? t('choice.one', { group: group.name }) : t('choice.min', { group: group.name, n: min });
}

/**
 * The status box under "Place order": `kind` is its data-state (idle,
 * sending, retrying, success, info, error, cancelled); `extra` may name the
 * ticket, a refusal's code, and the order it tells about (orderId and its
 * status), which it then follows as the kitchen moves it along.
 */
export function setStatus(kind, text, extra = {}) {
  const box = $('status');
  box.setAttribute('aria-live', kind === 'error' || kind === 'cancelled' ? 'assertive' : 'polite');
  box.dataset.state = kind;
  for (const [attr, value] of [
    ['ticket', extra.ticket], ['code', extra.code], ['orderId', extra.orderId], ['orderStatus', extra.orderStatus],
  ]) {
    if (value != null && value !== '') box.dataset[attr] = String(value);
    else delete box.dataset[attr];
  }
  box.textContent = text;
  hooks.statusChanged();
}

/** Where "Place order" leaves the focus once an order is placed: the status, which says how it went. */
export function focusStatus() {
  const active = document.activeElement;
  // Only when the guest's focus was on the order's buttons or got lost
  // (the button is disabled once the cart is empty): never steal it.
  if (active && active !== document.body && active !== $('confirm') && active !== $('order-again')) return;
  $('status').focus({ preventScroll: false });
}

export function showNotice(kind, text, code = null) {
  const n = $('notice');
  n.className = `notice notice-${kind}`;
  n.textContent = text;
  if (code) n.dataset.code = code;
  else delete n.dataset.code;
  n.hidden = false;
}

/** Retry-After as "3 minutes" (rounded up; at least one). */
function minutes(err) {
  return t('time.minutes', { n: Math.max(1, Math.ceil((err?.retryAfter ?? 60) / 60)) });
}

export function problemText(err) {
  switch (err?.code) {
    case 'PIN_INVALID': return t('problem.pinInvalid');
    // The lock may be the table's or the whole network's (the problem
    // does not say which), so the text holds for both.
    case 'PIN_LOCKED': return t('problem.pinLocked', { minutes: minutes(err) });
    case 'SESSION_RATE_LIMITED': return t('problem.rateLimited', { minutes: minutes(err) });
    case 'SESSION_CLOSED': return t('problem.sessionClosed');
    case 'ACCESS_ENDED': return t('problem.accessEnded');
    case 'NOT_FOUND': return t('problem.notFound');
    case 'CATALOG_NOT_READY': return t('problem.catalogNotReady');
    case 'NETWORK_ERROR':
    case 'TIMEOUT':
      return t('problem.network');
    default:
      return err?.message || t('problem.generic');
  }
}
