/**
 * guest.js: the table's ordering page, /t/{sessionId}#pin=123456, and the
 * same page behind a permanent table card, /q/{code}.
 *
 * /q/{code} (guest-table.js) first asks the card which party is seated at
 * the table: none yet says so and opens by itself once staff seat one; a
 * party whose guest token this tab holds goes straight to the menu; else
 * the PIN staff gave the party is asked for and traded for its token. From
 * there on the page is the same as /t/{sessionId}, except that a token
 * refused later asks for the PIN again instead of the QR code.
 *
 * The PIN is read from the URL fragment, once. order-sdk.js trades it for a
 * guest token on the first call and sends the token instead from then on
 * (also on the table's event stream), so other people's wrong PINs cannot
 * lock this page out; the PIN itself goes out (X-Session-PIN, `pin` on the
 * stream) only while no token could be had. The token is kept per table in
 * sessionStorage ('ordergate.guestToken.<sessionId>', see order-sdk.js):
 * once the page holds it, the PIN is taken out of the address
 * (history.replaceState to /t/{sessionId}), and a reload, or a phone
 * restoring the tab, opens the table with the stored token alone. In-page
 * links (the skip links, the tabs, the category chips, the "View your
 * order" bar) scroll to their target and move the focus there without
 * touching the address. A token that dies (checkout, expiry) is said so:
 * a table the page saw checked out is remembered as such
 * ('ordergate.closed.<sessionId>' in sessionStorage); a token refused with
 * no PIN to trade in again asks for the QR code (ACCESS_ENDED).
 *
 * Orders go through order-sdk.js, which owns the exactly-once rules (one
 * Idempotency-Key per cart, joined double taps, retries, reconciliation).
 * An order whose outcome stays unknown (NOT_CONFIRMED) is kept, with its
 * cart, and sent again by the page itself with the same key as soon as the
 * connection is back (the stream live again, the browser online, the page
 * shown again, or a light read of the table that succeeds), also after a
 * reload; the status box then says how it went. After an order is placed
 * the focus goes to the status box, which follows that order's later
 * statuses (and says so when the restaurant cancels it).
 *
 * The page's own texts come from web/i18n/<lang>.json (see i18n.js), in the
 * language the guest chose (kept in localStorage 'ordergate.lang'), else
 * the first of the browser's languages the shop offers, else the shop's
 * first; the menu is read in that language (?lang=). Items with option
 * groups are chosen in the item sheet (guest-sheet.js); allergens, tags and
 * the menu filter follow menu-rules.js.
 *
 * "Call staff" and "Ask for the bill" (guest-service.js) make one service
 * request each, however often they are tapped, and say how it goes as the
 * table's stream tells ("Calling staff…", "Staff are on the way."). The
 * kitchen's current pace (guest-wait.js) shows by "Place order" and under
 * the status of an order being cooked.
 *
 * Hooks for browser tests (stable ids and data attributes):
 *   #gate[data-state]               /q/{code} only, until the guest is in
 *                                   (then hidden): checking | not-open (nobody
 *                                   seated: looked at again every 5 s and when
 *                                   the page is shown again) | offline (no
 *                                   answer; tried again) | pin; the rest of
 *                                   the page (tabs, skip links, menu, cart,
 *                                   orders, #service) is not shown meanwhile
 *                                   (body[data-view="gate"])
 *     #gate-title                   "Table T4"
 *     #gate-status                  polite live text: "This table is not open
 *                                   yet. …", "The table is open. …"
 *     #pin-form                     shown in state pin:
 *       #pin-input                  the PIN (inputmode=numeric,
 *                                   autocomplete=one-time-code, labelled;
 *                                   keeps digits only, full-width ones too,
 *                                   at most six); aria-invalid="true" after
 *                                   a wrong or incomplete PIN
 *       #pin-error                  role=alert: incomplete, wrong PIN
 *                                   (PIN_INVALID), locked for N minutes
 *                                   (PIN_LOCKED, from Retry-After; #pin-submit
 *                                   is disabled until then), table reseated,
 *                                   unreachable
 *       #pin-submit                 "Open the menu"; aria-busy while checking
 *   #shop-name, #table-label        shop name, "Table T1"
 *   #live[data-state]               connecting | live | reconnecting | offline
 *                                   | closed (checked out: no more reconnects)
 *   #lang                           the language select, in #lang-switch (hidden
 *                                   when the shop offers one language);
 *                                   option[value=<tag>][lang=<tag>] labelled in
 *                                   its own language ("English", "日本語")
 *   html[lang]                      the language shown; html[data-lang-ready]
 *                                   the language whose texts and menu are in
 *                                   place (set after each switch)
 *   a.skip-link[href="#menu"], a.skip-link[href="#cart"]  "Skip to the menu",
 *                                   "Skip to your order": the first two tab stops
 *   #tabs a[href="#menu" | "#cart" | "#history"]  the page's tabs (one row,
 *                                   none cut off, from 320 px wide); #nav-cart-count
 *   #notice                         page-level problem (bad link, table closed,
 *                                   PIN locked, access ended), hidden when
 *                                   there is none; data-code: the problem's
 *                                   code, if any (SESSION_CLOSED, PIN_LOCKED,
 *                                   ACCESS_ENDED, BAD_LINK, NOT_FOUND (a table
 *                                   card the server does not know), …)
 *     #retry                        "Try again" (reloads), while the PIN is locked
 *     #enter-pin                    "Enter the PIN" (reloads the card), after
 *                                   ACCESS_ENDED on /q/{code}
 *   #service[data-call-state][data-bill-state]  "Call staff" / "Ask for the
 *                                   bill", above the menu; each state idle |
 *                                   sending | open | acknowledged | error
 *                                   (shown once the table's session is read,
 *                                   hidden once the table is closed)
 *     #call-staff, #ask-bill        the buttons (button[data-kind=call|bill]);
 *                                   aria-busy while that request is sent
 *     #service-status               polite live region, one line per request
 *                                   not idle: p[data-kind][data-state]
 *                                   [data-request-id] "Calling staff… (since
 *                                   12:03)", "Staff are on the way." (shown
 *                                   5 min, then idle again), "…could not…"
 *   #service-badge[data-state]      in the top bar while a request is open or
 *                                   acknowledged ("Staff called", "Staff on
 *                                   the way") and #service is scrolled out of
 *                                   sight; a link to #service
 *   #wait[data-minutes]             by "Place order": "Food takes about 12 min
 *                                   right now." (hidden without an estimate,
 *                                   and while #status-wait shows it)
 *   #status-wait[data-minutes]      the same under #status while the order it
 *                                   follows is placed, accepted or preparing
 *   #menu-items[aria-busy]          "false" once the menu is shown
 *   #categories a[href="#cat-N"]    category links; sections are #cat-N
 *                                   (hidden, like their link, while the filter
 *                                   leaves none of their items); a tap
 *                                   scrolls there and focuses the section,
 *                                   the address stays as it is
 *   #filter-bar                     hidden when no item declares allergens or tags
 *   #filter-toggle[aria-expanded]   shows #filters, the menu filter (#filter-count:
 *                                   how many choices are on):
 *     input[data-filter-allergen=CODE]  leave out dishes that declare CODE
 *                                   (or a related code: wheat/gluten, …)
 *     input[data-filter-tag=TAG]    keep only dishes tagged TAG
 *   #filter-status                  polite live text: "Showing 3 of 8 dishes.
 *                                   Without: Peanut." (empty when no filter)
 *   #filter-clear                   clears the filter (shown while one is on)
 *   #filter-empty                   shown when the filter leaves no dish
 *   .item[data-item-id]             one menu item, also with
 *        [data-sold-out="true|false"] and [data-stock] (empty = untracked),
 *        [data-has-choices="true"] when it has option groups (chosen in the
 *        sheet), [data-filtered="true"] while the filter hides it
 *     button[data-action="open"][data-item-id]   its name: opens the sheet
 *     button[data-action="add"][data-item-id]    its Add button, on items
 *                                   without option groups (disabled and
 *                                   labelled "Sold out" when sold out)
 *     button[data-action="choose"][data-item-id] "Choose", on items with
 *                                   option groups: opens the sheet (disabled
 *                                   and labelled "Sold out" when sold out)
 *     input[data-topping-id][data-item-id]       its topping checkboxes, on
 *                                   items without option groups (at most
 *                                   maxToppings can be ticked)
 *     [data-role="stock"]           "Sold out" / "Only 3 left"
 *     [data-role="photo"][data-photo="image|none"][data-item-id]  its photo
 *                                   box, shown when some item of the menu has a
 *                                   photo: an img (alt = the name, lazy) or a
 *                                   decorative stand-in (aria-hidden); a tap
 *                                   opens the sheet
 *     [data-role="allergens"] li[data-allergen=CODE]  icon + name of each allergen
 *     [data-role="tags"] li[data-tag=TAG]             icon + label of each tag
 *   #item-sheet                     the item sheet (a modal dialog, [open] while
 *                                   shown), [data-item-id], [data-mode=add|edit]
 *     #sheet-title, #sheet-close    the item's name (focused on open), close
 *     #sheet-photo                  the photo, larger (hidden when there is none)
 *     #sheet-price, #sheet-desc, #sheet-diet  price, description, allergens/tags
 *     fieldset[data-group-id][data-min][data-max][data-required]
 *                                   one option group, [data-satisfied]
 *       input[data-option-id][data-group-id]   radio (maxChoices 1) or
 *                                   checkbox; disabled when sold out (its label
 *                                   [data-sold-out="true"]) or the group is full
 *       input[data-none]            "None", for an optional single choice
 *     fieldset[data-role="toppings"] input[data-topping-id]  (no data-item-id)
 *     #sheet-note (one line, ≤ 140 chars), #sheet-note-count
 *     #sheet-dec, #sheet-qty, #sheet-inc      the quantity
 *     #sheet-total[data-amount]     the line's total (minor units) as it changes
 *     #sheet-add                    "Add to order" / "Update order"; disabled
 *                                   while a required group is unmet, with
 *                                   aria-describedby="sheet-reason"
 *     #sheet-reason                 why Add is disabled ("Doneness: choose one")
 *   #cart                           the cart section
 *     #cart-lines > li[data-line-key][data-item-id][data-quantity]
 *                                   a cart line (key: itemId|sorted topping ids|
 *                                   sorted option ids|URI-encoded line note),
 *                                   [data-option-ids] (sorted, comma-separated)
 *       button[data-action="inc" | "dec" | "remove" | "edit"] ("edit" opens
 *                                   the sheet on the line)
 *       [data-role="qty"], [data-role="line-total"], [data-role="warning"],
 *       [data-role="options"] (the chosen options), [data-role="line-note"]
 *     #cart-empty, #cart-total, #note (≤ 200 chars), #note-count
 *     #cart-problem                 why the cart cannot be sent (sold out, …)
 *     #confirm                      "Place order · $12.90"; "Sending…" with
 *                                   aria-busy="true" while a submit runs;
 *                                   "Send my order again" while an order is
 *                                   unconfirmed
 *     #status[data-state]           idle | sending | retrying | success | info
 *                                   | error | cancelled; the text, e.g. "Order
 *                                   placed — ticket 12" or "Already placed —
 *                                   ticket 12", then the order's later status
 *                                   ("Ticket 12: your order is being
 *                                   prepared.", "Ticket 12 was cancelled by
 *                                   the restaurant. …" with state cancelled);
 *                                   tabindex=-1: it takes the focus once an
 *                                   order is placed
 *     #status[data-ticket]          the ticket number after a success
 *     #status[data-order-id][data-order-status]  the order it tells about
 *                                   and its status as last heard
 *     #status[data-code]            the refusal's code after an error
 *                                   (INVALID_OPTIONS, OUT_OF_STOCK,
 *                                   NOT_CONFIRMED: kept and sent again by
 *                                   itself once the connection is back, …)
 *     #order-again                  shown after "already placed": order the
 *                                   same cart once more (allowRepeat)
 *   #orders > li[data-order-id][data-order-status][data-ticket]
 *                                   the table's orders, newest first; the
 *                                   human status is in [data-role="status"]
 *   #orders-empty
 *   #cart-bar                       phone footer linking to #cart, one row:
 *     #cart-bar-count, #cart-bar-total  "2 dishes", "$12.90"
 *   #announce                       polite live region (cart changes, order
 *                                   status changes)
 *   document.documentElement[data-ready="true"]  once the first load is done
 */

import { createOrderClient, createMenuLoader, getShop } from './order-sdk.js';
import {
  loadMessages, createTranslator, pickLanguage, languageName, MESSAGE_LANGUAGES,
} from './i18n.js';
import { $, el, announce } from './guest-dom.js';
import { createItemSheet } from './guest-sheet.js';
import { enterTable, retextGate } from './guest-table.js';
import {
  loadService, requestService, applyServiceEvent, closeService, renderService, setServiceInView,
} from './guest-service.js';
import {
  startWait, waitMayHaveChanged, stopWait, renderWait,
} from './guest-wait.js';
import {
  state, hooks, t, setTranslator, money, itemSoldOut, showNotice, problemText,
} from './guest-page.js';
import {
  refreshMenu, catalogSignature, applyStock, renderMenu, renderDiet, updateAvailability,
  onToppingChange, loadFilter, onFilterChange, clearFilter,
} from './guest-menu.js';
import {
  loadCart, saveCart, putLine, addToCart, changeLine, renderCart, setCartInView, updateNoteCount,
} from './guest-cart.js';
import {
  placeOrder, onProgress, refreshOrders, upsertOrder, renderOrders, resumeOrder, restoreUnconfirmed,
} from './guest-orders.js';

const LANG_STORAGE_KEY = 'ordergate.lang';
const CLOSED_PREFIX = 'ordergate.closed.';

// ── languages ───────────────────────────────────────────────────────────

function storedLanguage() {
  try { return localStorage.getItem(LANG_STORAGE_KEY); } catch { return null; }
}

function browserLanguages() {
  return navigator.languages?.length ? navigator.languages : [navigator.language].filter(Boolean);
}

/** Reads the messages of `lang` and puts them on the page. */
async function useLanguage(lang) {
  const bundles = await loadMessages(lang);
  state.lang = lang;
  setTranslator(createTranslator(lang, bundles));
  document.documentElement.lang = lang;
  applyStaticTexts();
}

/** The texts written in guest.html, by their data-i18n keys. */
function applyStaticTexts() {
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-aria-label]')) {
    node.setAttribute('aria-label', t(node.dataset.i18nAriaLabel));
  }
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) {
    node.setAttribute('placeholder', t(node.dataset.i18nPlaceholder));
  }
  updateTitle();
  updateNoteCount();
}

function updateTitle() {
  const table = state.session?.tableLabel ?? state.tableName;
  if (state.shop?.name && table) document.title = t('page.titleShop', { shop: state.shop.name, table });
  else if (table) document.title = t('page.titleTable', { table });
  else document.title = t('page.title');
  if (table) $('table-label').textContent = t('table.label', { table });
}

function renderLanguageSwitch() {
  const select = $('lang');
  const offered = state.languages;
  select.replaceChildren(...offered.map((tag) =>
    el('option', { value: tag, lang: tag, selected: tag === state.lang }, languageName(tag))));
  select.value = state.lang;
  $('lang-switch').hidden = offered.length < 2;
}

async function switchLanguage(lang) {
  if (lang === state.lang) return;
  try { localStorage.setItem(LANG_STORAGE_KEY, lang); } catch { /* kept for this visit only */ }
  delete document.documentElement.dataset.langReady;
  await useLanguage(lang);
  renderLanguageSwitch();
  state.menuLoader?.setLanguage(lang);
  setLive($('live').dataset.state);
  if (state.menu) {
    await refreshMenu();
    // Texts the menu does not carry (buttons, allergens) change too, even
    // when the menu could not be read again.
    if (state.renderedCatalog !== catalogSignature(state.menu)) renderMenu();
  }
  renderCart();
  renderOrders();
  renderService();
  renderWait();
  retextGate();
  state.sheet?.retext();
  document.documentElement.dataset.langReady = lang;
  announce(t('announce.language', { name: languageName(lang) }));
}

/**
 * Staff changed the menu (items, choices, photos, its languages): read the
 * shop's languages and the menu again, in place, without a reload.
 */
async function menuChanged() {
  try {
    const shop = await getShop({ shopId: state.session.shopId });
    if (Array.isArray(shop.languages) && shop.languages.length) {
      state.languages = shop.languages.map(String);
      if (!state.languages.includes(state.lang)) {
        await switchLanguage(state.languages[0]);
        return;
      }
      renderLanguageSwitch();
    }
  } catch {
    // The shop could not be read now: the menu still can.
  }
  await refreshMenu();
}

// ── the session ─────────────────────────────────────────────────────────

function fatal(text, { kind = 'error', code = null } = {}) {
  showNotice(kind, text, code);
  stopOrdering();
  // The page stops before it learns the shop or opens the stream.
  $('live').hidden = true;
  $('shop-name').textContent = t('shop.fallback');
  $('menu-items').replaceChildren(el('p', { class: 'muted' }, t('menu.unavailable')));
  $('menu-items').setAttribute('aria-busy', 'false');
  state.closed = true;
  renderCart();
  renderService();
  document.documentElement.dataset.ready = 'true';
}

function setClosed() {
  // A checked-out table stays checked out: a reload says so without its
  // token (dead now) or its PIN (gone from the address).
  rememberClosed(state.sessionId);
  if (state.closed) return;
  state.closed = true;
  // The server ends the stream at checkout; nothing would come any more.
  state.stream?.close();
  setLive('closed');
  showNotice('warning', problemText({ code: 'SESSION_CLOSED' }), 'SESSION_CLOSED');
  stopOrdering();
  saveCart(); // a closed table's cart is not kept
  closeService(); // checkout acknowledged what was open
  stopWait();
  updateAvailability();
  renderCart();
}

/**
 * The guest token was refused (expired, or the table was checked out: the
 * server answers both alike) and the page has no PIN to trade in again:
 * say so, and stop. Behind a table card the card is at hand: a reload of
 * it asks for the PIN (or finds the table closed).
 */
function setAccessEnded() {
  if (state.closed) return;
  state.closed = true;
  state.accessEnded = true; // the table may still be open: its cart is kept for the QR code scanned again
  state.stream?.close();
  setLive('closed');
  if (state.tableCode) {
    showNotice('warning', t('problem.accessEndedCard'), 'ACCESS_ENDED');
    const again = el('button', { type: 'button', id: 'enter-pin', class: 'btn btn-secondary' }, t('action.enterPin'));
    again.addEventListener('click', () => location.reload());
    $('notice').append(' ', again);
  } else {
    showNotice('warning', problemText({ code: 'ACCESS_ENDED' }), 'ACCESS_ENDED');
  }
  stopOrdering();
  renderService(); // its requests stay kept for when the table is opened again
  stopWait();
  updateAvailability();
  renderCart();
}

/** No order is sent by itself any more (the table is closed, or the page cannot reach it). */
function stopOrdering() {
  clearTimeout(state.resumeTimer);
  state.resumeTimer = null;
}

function rememberClosed(sessionId) {
  try { sessionStorage.setItem(CLOSED_PREFIX + sessionId, '1'); } catch { /* this visit only */ }
}

function knownClosed(sessionId) {
  try { return sessionStorage.getItem(CLOSED_PREFIX + sessionId) === '1'; } catch { return false; }
}

function setLive(status) {
  const live = $('live');
  live.dataset.state = status;
  live.textContent = t(`live.${status}`);
}

// ── in-page links ───────────────────────────────────────────────────────

const reducedMotion = () => window.matchMedia?.('(prefers-reduced-motion: reduce)').matches;

/**
 * Scrolls to an element of the page and moves the focus there, as an
 * in-page link would, but without changing the address: the page's address
 * is what a reload starts from, and a fragment would replace what it needs.
 */
function jumpTo(target) {
  if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
  target.focus({ preventScroll: true });
  // Just below the sticky top bar, however tall it is (a notice, a narrow phone).
  const bar = document.querySelector('.topbar')?.getBoundingClientRect().height ?? 0;
  const top = target.getBoundingClientRect().top + window.scrollY - bar - 8;
  window.scrollTo({ top: Math.max(0, top), behavior: reducedMotion() ? 'auto' : 'smooth' });
}

function onLinkClick(e) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const link = e.target.closest?.('a[href^="#"]');
  if (!link) return;
  let id;
  try { id = decodeURIComponent(link.getAttribute('href').slice(1)); } catch { return; }
  const target = id ? document.getElementById(id) : null;
  e.preventDefault();
  if (target && !target.hidden) jumpTo(target);
}

/**
 * Takes the PIN out of the address once the page holds the table's token
 * (kept in sessionStorage): a reload then opens the table with the token,
 * and the PIN is not shown, bookmarked or shared with the link.
 */
function dropPinFromAddress() {
  if (!/(^#|&)pin=/.test(location.hash) || typeof history.replaceState !== 'function') return;
  try {
    history.replaceState(history.state, '', `${location.pathname}${location.search}`);
  } catch { /* the address keeps it: in-page links leave it alone anyway */ }
}

// ── wiring ──────────────────────────────────────────────────────────────

function openSheet(itemId, opener) {
  const item = state.items.get(itemId);
  if (!item) return;
  state.sheet.open(itemId, { opener, toppingIds: [...(state.selected.get(itemId) ?? [])] });
}

function wire() {
  document.addEventListener('click', onLinkClick);
  $('menu-items').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-action]');
    if (button && !button.disabled) {
      const { action, itemId } = button.dataset;
      if (action === 'add') addToCart(itemId);
      else if (action === 'choose' || action === 'open') openSheet(itemId, button);
      return;
    }
    // A tap on a photo opens the sheet too (the name button is the keyboard's way).
    const pic = e.target.closest('[data-role="photo"][data-item-id]');
    if (pic) openSheet(pic.dataset.itemId, pic.closest('.item')?.querySelector('[data-action="open"]'));
  });
  $('menu-items').addEventListener('change', (e) => {
    if (e.target.matches('input[data-topping-id]')) onToppingChange(e.target);
  });
  $('cart-lines').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-action]');
    const row = button?.closest('[data-line-key]');
    if (button && row && !button.disabled) changeLine(row.dataset.lineKey, button.dataset.action, button);
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
  $('filter-toggle').addEventListener('click', () => {
    const open = $('filters').hidden;
    $('filters').hidden = !open;
    $('filter-toggle').setAttribute('aria-expanded', String(open));
  });
  $('filters').addEventListener('change', (e) => {
    if (e.target.matches('input[data-filter-allergen], input[data-filter-tag]')) onFilterChange(e.target);
  });
  $('filter-clear').addEventListener('click', clearFilter);
  $('service').addEventListener('click', (e) => {
    const button = e.target.closest('button[data-kind]');
    if (button) requestService(button.dataset.kind);
  });
  $('filter-empty-clear').addEventListener('click', clearFilter);
  $('lang').addEventListener('change', (e) => { switchLanguage(e.target.value); });
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((entries) => {
      setCartInView(entries.some((e) => e.isIntersecting));
    }, { threshold: 0.1 }).observe($('cart'));
    new IntersectionObserver((entries) => {
      setServiceInView(entries.some((e) => e.isIntersecting));
    }, { threshold: 0.5 }).observe($('service'));
  }
  document.addEventListener('visibilitychange', () => {
    // Phones freeze background tabs: catch up when the guest comes back.
    if (document.visibilityState === 'visible' && state.menu) {
      refreshMenu();
      refreshOrders();
      resumeOrder();
      waitMayHaveChanged();
    }
  });
  // The connection is back: an unconfirmed order goes again by itself.
  window.addEventListener('online', () => { if (state.session) resumeOrder(); });
}

/** {sessionId, pin} of /t/{sessionId}#pin=…, {tableCode} of /q/{code}, or {} for another address. */
function parseLocation() {
  const card = /^\/q\/([^/]+)\/?$/.exec(location.pathname);
  if (card) {
    try { return { tableCode: decodeURIComponent(card[1]) }; } catch { return {}; }
  }
  const m = /^\/t\/([^/]+)\/?$/.exec(location.pathname);
  let sessionId = null;
  try { sessionId = m ? decodeURIComponent(m[1]) : null; } catch { /* a broken address */ }
  const pin = new URLSearchParams(location.hash.replace(/^#/, '')).get('pin');
  return { sessionId, pin: pin && /^\d{6}$/.test(pin) ? pin : null };
}

/** The page's order client for a session (the PIN may be null: a stored token, or none). */
function makeClient(sessionId, pin) {
  return createOrderClient({
    sessionId, pin, onProgress, onToken: (held) => { if (held) dropPinFromAddress(); },
  });
}

/** The shop once read (null if it could not be): its name, and the language from its list. */
async function showShop(shop) {
  state.shop = shop;
  $('shop-name').textContent = shop?.name ?? t('shop.fallback');
  if (Array.isArray(shop?.languages) && shop.languages.length) state.languages = shop.languages.map(String);
  const lang = pickLanguage({ offered: state.languages, stored: storedLanguage(), preferred: browserLanguages() });
  if (lang !== state.lang) await useLanguage(lang);
  renderLanguageSwitch();
  updateTitle();
}

async function main() {
  const { sessionId = null, pin = null, tableCode = null } = parseLocation();
  state.tableCode = tableCode;
  // A table card shows its gate alone until the guest is in.
  if (tableCode) document.body.dataset.view = 'gate';
  state.sessionId = sessionId;
  // Kept in memory only, to trade in again should the token be refused.
  state.pin = pin;
  // Without the PIN (gone from the address), a table this tab saw checked
  // out says so; else the stored token opens it.
  const closedBefore = Boolean(sessionId && !pin && knownClosed(sessionId));
  if (sessionId && !closedBefore) state.client = makeClient(sessionId, pin);
  const valid = Boolean(state.client?.hasAccess);
  if (state.client?.hasToken) dropPinFromAddress();
  // The session is asked for while the texts are read.
  let reading = null;
  if (valid) {
    reading = state.client.getSession().then((session) => ({ session }), (error) => ({ error }));
  }
  // Until the shop says which languages it has: the guest's own, if there
  // are texts for it.
  await useLanguage(pickLanguage({ offered: MESSAGE_LANGUAGES, stored: storedLanguage(), preferred: browserLanguages() }));
  state.sheet = createItemSheet({
    t: () => t,
    money,
    item: (id) => state.items.get(id) ?? null,
    toppings: () => state.toppings,
    soldOut: itemSoldOut,
    closed: () => state.closed,
    diet: renderDiet,
    submit: (line, opts) => {
      const ok = putLine(line, opts);
      if (ok) { state.selected.delete(line.menuItemId); updateAvailability(); }
      return ok;
    },
  });
  hooks.menuChanged = () => {
    renderCart();
    renderOrders();
    state.sheet.refresh();
  };
  hooks.setClosed = setClosed;
  hooks.setAccessEnded = setAccessEnded;
  hooks.languagesChanged = renderLanguageSwitch;
  hooks.statusChanged = renderWait;
  wire();
  $('shop-name').textContent = t('shop.loading');
  setLive('connecting');
  updateNoteCount();
  if (tableCode) {
    // No stream, so no "Connecting…", before the table is opened.
    $('live').hidden = true;
    const entry = await enterTable(tableCode, { makeClient, onShop: showShop });
    if (entry.error) {
      fatal(problemText(entry.error), { code: entry.error.code });
      return;
    }
    state.sessionId = entry.sessionId;
    state.client = entry.client;
    state.pin = entry.pin;
    reading = Promise.resolve({ session: entry.session });
    delete document.body.dataset.view;
    $('live').hidden = false;
    // The focus was in the gate, gone now: the menu is where the guest goes on.
    $('menu').focus({ preventScroll: true });
    window.scrollTo(0, 0);
  } else if (closedBefore) {
    fatal(problemText({ code: 'SESSION_CLOSED' }), { kind: 'warning', code: 'SESSION_CLOSED' });
    return;
  } else if (!valid) {
    fatal(t('problem.badLink'), { code: 'BAD_LINK' });
    return;
  }
  loadCart();
  loadFilter();
  updateNoteCount();
  renderCart();

  const { session, error: err } = await reading;
  if (err) {
    if (err?.code === 'SESSION_CLOSED') rememberClosed(sessionId);
    const calm = err?.code === 'SESSION_CLOSED' || err?.code === 'ACCESS_ENDED';
    fatal(problemText(err), { kind: calm ? 'warning' : 'error', code: err?.code });
    // A lock lapses, or staff lift it: the guest can try again from here.
    if (err?.code === 'PIN_LOCKED') {
      const retry = el('button', { type: 'button', id: 'retry', class: 'btn btn-secondary' }, t('action.retry'));
      retry.addEventListener('click', () => location.reload());
      $('notice').append(' ', retry);
    }
    return;
  }
  state.session = session;
  updateTitle();
  loadService();
  startWait(session.shopId);
  if (session.status === 'closed') setClosed();

  if (!state.closed) {
    state.stream = state.client.subscribeEvents({
      onStatus: setLive,
      // The table's session.closed event, or a checkout the stream missed.
      onEnd: (err) => {
        if (err.code === 'SESSION_CLOSED') setClosed();
        else if (err.code === 'ACCESS_ENDED') setAccessEnded();
        else showNotice('error', problemText(err), err.code);
      },
      // Every (re)connection: catch up on what the stream could not replay
      // (a lapsed 86, changes while the menu was first read), and send an
      // order left unconfirmed while the connection was down.
      onOpen: () => { refreshMenu(); refreshOrders(); resumeOrder(); waitMayHaveChanged(); },
      onEvent: (type, data) => {
        if (type === 'stock.changed') applyStock(data);
        else if (type === 'order.placed' || type === 'order.updated') upsertOrder(data);
        else if (type === 'menu.changed') menuChanged();
        else if (type === 'service.requested' || type === 'service.acknowledged') applyServiceEvent(data);
        // An order of this table moved on: the kitchen's pace may have too.
        if (type === 'order.updated') waitMayHaveChanged();
      },
    });
  }

  if (!state.closed) restoreUnconfirmed();
  // The shop decides the languages; the menu is read in the chosen one.
  const orders = refreshOrders();
  if (state.shop?.shopId !== session.shopId) {
    let shop = null;
    try { shop = await getShop({ shopId: session.shopId }); } catch { /* its name stays unknown */ }
    await showShop(shop);
  }
  setLive($('live').dataset.state);
  state.menuLoader = createMenuLoader({ shopId: session.shopId, lang: state.lang });
  await Promise.all([refreshMenu(), orders]);
  renderCart();
  renderOrders();
  document.documentElement.dataset.langReady = state.lang;
  document.documentElement.dataset.ready = 'true';
}

main();
