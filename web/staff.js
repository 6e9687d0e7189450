// Staff console: /staff/{shopId}
//
// Tables calling (a banner on every view), the floor (the shop's tables
// with their QR cards, seating a party), the open tables (PIN and QR code,
// orders entered by staff, unlock, check out with the bill), inventory,
// the order audit, the kitchen's settings, the kitchen printers, and the
// menu editor. The shop's
// event stream keeps it current: stock.changed re-reads the inventory,
// session.opened/closed the tables and the floor, order events the audit,
// service.requested/acknowledged the calls, menu.changed the shop (its
// languages and kitchen settings) and an open order dialog's menu. A table
// locked by wrong PINs makes no event, nor does a table added elsewhere,
// so the tables and the floor are also re-read every 15 s. The menu editor
// (menu-editor.js) is a view of its own at #menu: it hides the service
// sections while shown; any other hash shows them again.
//
// The parts, one module each: staff-service.js (tables calling),
// staff-floor.js (the floor and its QR cards), staff-sessions.js (open and
// closed tables, the table card), staff-order.js with staff-order-draft.js
// (staff-entered orders), staff-bill.js (the bill), staff-inventory.js,
// staff-audit.js, staff-kitchen.js (kitchen settings), staff-printers.js
// (kitchen printers: their state, adding, removing, reprints), staff-team.js
// (staff accounts and devices); staff-dom.js and
// staff-qr.js are small helpers they share.
//
// Test hooks (plus the shared ones listed in console.js: #sign-in,
// #login-form, #token-form, #app, #signed-in-as, #sign-out, #shop-name, #connection
// [data-state], #announcer, #problem, button#sound-toggle, #sound-hint —
// the console's mute is kept in localStorage ordergate.staff.muted):
//   Tables calling
//   #service-requests      the banner (hidden while no table calls); #service-count
//   #service-list li[data-request-id]  an open request, newest first: data-kind
//                          (call | bill), data-table, data-session-id;
//                          time[data-role=age] (how long it has waited);
//                          a[data-action=go-to-session] (to its open table's row);
//                          button[data-action=ack] (aria-busy while sent);
//                          [data-role=error] when the acknowledgement failed
//   Floor (in the Tables section)
//   #create-table-form, #new-table-name, its submit button; #create-table-error
//                          (the server's refusal: TABLE_NAME_TAKEN, 422 on name)
//   #floor-count, #floor-seated  how many tables, how many seated
//   #floor-list tr[data-table-id]  a table: data-table-name, data-state
//                          (free | seated), data-session-id (seated);
//                          button[data-action=seat] (free: opens a session
//                          for it and shows the table card, PIN big);
//                          a[data-action=go-to-session] (seated: to the open
//                          table's row); button[data-action=show-card];
//                          [data-role=row-message] (data-kind=error on a refusal)
//   #table-cards-box       the QR cards (a <details>); #table-cards-count;
//                          #print-cards ("Print all cards": sheets of cards)
//   #table-cards .qr-card[data-table-id]  a table's card: .qr-card-name,
//                          .qr[data-table-url] with its svg[role=img][data-table-url],
//                          .qr-card-scan ("Scan to order" in the shop's
//                          languages, each in a span[lang]), .qr-card-url,
//                          button[data-action=print-card] (that card alone)
//   #print-sheet           what is printed (copies of the cards; .is-single
//                          for one card): body.print-cards while printing
//   Tables
//   #open-table-form, #table-label, its submit button; #open-table-error
//   #table-card            the table just opened (or shown): data-session-id
//     #table-card-label    its table label
//     #table-pin           its six-digit PIN (big; text = the PIN)
//     #table-qr            the QR code (an <svg role=img>) with data-guest-url
//     #table-guest-url     a link to the guest page; #table-card-print, #table-card-close
//   #active-list tr[data-session-id]   an open table (id session-<sessionId>):
//                          data-table-label, data-status=active,
//                          data-pin-locked (true while wrong PINs lock it);
//                          [data-role=pin]; [data-role=pin-lock] "Locked
//                          until …" (while locked);
//                          button[data-action=add-order] (the order dialog),
//                          button[data-action=show-qr],
//                          button[data-action=unlock] (while locked: lifts the lock),
//                          button[data-action=checkout] (opens the bill dialog)
//   #closed-list tr[data-session-id]   a recently closed table (the last 10),
//                          data-status=closed; button[data-action=bill]
//   #tables-status         the last staff order sent ("Ticket #12 …"), role=status
//   #bill-dialog           the checkout/bill dialog: data-session-id and
//                          data-mode = preview (table still open) | closed
//     #bill-orders tr[data-order-id]   an order with data-status
//     #bill-total          the total, formatted; data-amount in minor units
//     #checkout-confirm    closes the table (POST …/checkout); shown in preview
//     #bill-error, #bill-print, #bill-close
//   Staff orders
//   #order-dialog          data-session-id; #order-title
//     #order-filter        narrows the menu by name; #order-menu-state (loading, failed)
//     #order-menu li[data-item-id] button[data-action=pick]  an item (disabled
//                          when sold out): one tap adds it, or opens its line
//                          when it has choices or toppings
//     #order-line          the line being built (#order-line-form): #order-line-title,
//                          fieldset[data-group-id][data-required] with
//                          input[data-option-id] (radio for one choice, else
//                          checkboxes; input[data-none] for an optional one),
//                          fieldset[data-role=toppings] input[data-topping-id],
//                          #order-line-note, #order-line-quantity
//                          (#order-line-less, #order-line-more), #order-line-total,
//                          #order-line-add (disabled while a required group is
//                          not chosen; #order-line-reason says why, tied by
//                          aria-describedby), #order-line-back
//     #order-draft li[data-line-key]  a drafted line: data-menu-item-id,
//                          data-quantity; button[data-action=less|more|remove];
//                          [data-role=line-error] what the menu or the server
//                          says is wrong with it (.has-error on the li; it
//                          stops the order); [data-role=line-warning] fewer
//                          left on the menu than asked for (the server judges)
//     #order-note, #order-total, #order-draft-empty
//     #order-send          sends it (disabled with #order-send-reason while it
//                          cannot be); #order-error (role=alert) the refusal;
//                          #order-close (the draft is kept until sent)
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
//   Kitchen
//   #kitchen-form: #kitchen-warn-minutes, #kitchen-late-minutes (the shop's
//                          kitchenWarnMinutes / kitchenLateMinutes), their
//                          errors #kitchen-warn-error, #kitchen-late-error (the
//                          server's 422 on the field), #kitchen-save,
//                          #kitchen-status[data-kind=ok|error]
//   Printers (re-read every 5 s while shown)
//   #printers-count; #printers-empty
//   #printer-list tr[data-printer-id]  a printer, by name: data-printer-name,
//                          data-status (idle | printing | failing), data-backlog;
//                          [data-role=address], [data-role=station] ("all
//                          stations" without one), [data-role=status] with
//                          [data-role=badge] (Idle, Printing, Failing) and
//                          [data-role=status-detail] ("2 tickets waiting", the
//                          last error and since when), [data-role=unconfirmed]
//                          ("Unconfirmed: will reprint marked");
//                          [data-role=printed] (data-printed: the count; "Printed
//                          3 · last at …" in the shop's time);
//                          button[data-action=remove] (asks to confirm first);
//                          [data-role=row-message] (data-kind=error on a refusal)
//   #printer-form: #printer-name, #printer-address, #printer-station (optional),
//                          its submit button; their errors #printer-name-error,
//                          #printer-address-error, #printer-station-error (the
//                          server's 409 PRINTER_NAME_TAKEN and 422 on the field)
//   #reprint-form: #reprint-order (the shop's recent orders: option
//                          value = orderId, data-ticket), #reprint-printer,
//                          #reprint-submit; #reprint-status[data-kind=ok|error]
//                          ("Queued: ticket #12 on Grill.")
//   Staff and devices (#team; its halves #members-part for owners,
//   #devices-part for owners and managers)
//   #member-list tr[data-account-id]  a member: data-username, data-role;
//                          button[data-action=remove] (asks to confirm);
//                          [data-role=row-message] (data-kind=error on a refusal)
//   #member-form: #member-username, #member-password (only for a new
//                          account), #member-role, its submit; #member-error
//   #device-list tr[data-device-id]   a device: data-device-name, data-role
//                          (kitchen | floor); button[data-action=revoke]
//                          (asks to confirm); [data-role=row-message]
//   #device-form: #device-name, #device-role, its submit; #device-error
//   #device-token-card     the new device's sign-in, shown once: data-device-id;
//                          #device-qr (data-link, with its svg), #device-link
//                          (the link, read-only), #device-link-copy,
//                          #device-token-done
//   Roles: only the sections the credential's role may use are shown, and
//   their nav links; a section's hash it may not open shows
//   #not-allowed (#not-allowed-text says whose role cannot) instead.
//   Menu editor (its own hooks are listed at the top of menu-editor.js)
//   #menu-link             the nav link to the editor's view (#menu); aria-current
//                          on the link of the view shown
//   #menu                  the editor's section (hidden unless the hash is #menu;
//                          #tables, #inventory, #audit, #kitchen and #printers are hidden
//                          while it shows; the calls banner is not)

import {
  announce,
  Chime,
  IntentKeys,
  LiveStream,
  loadShop,
  moneyFormatter,
  problemText,
  shopIdFromPath,
  showProblem,
  withStaffSignIn,
} from './console.js';
import { createMenuEditor } from './menu-editor.js';
import { createAudit } from './staff-audit.js';
import { createBill } from './staff-bill.js';
import { $, debounce } from './staff-dom.js';
import { createFloor } from './staff-floor.js';
import { createInventory } from './staff-inventory.js';
import { createKitchenSettings } from './staff-kitchen.js';
import { createPrinters } from './staff-printers.js';
import { createStaffOrder } from './staff-order.js';
import { createService } from './staff-service.js';
import { createSessions } from './staff-sessions.js';
import { createTeam } from './staff-team.js';

const shopId = shopIdFromPath();
const shopPath = `/api/v1/shops/${encodeURIComponent(shopId)}`;
const keys = new IntentKeys();

let money = moneyFormatter('USD');
let languages = ['en'];
/** Sessions by id (open and recently closed): the tables, the floor, the bill and the audit read them. */
const sessions = new Map();

/** What the signed-in credential may do here (console.js rightsIn); null while signed out. */
let rights = null;
const may = (duty) => Boolean(rights && rights.may.has(duty));

const chime = new Chime({ mutedKey: 'ordergate.staff.muted', what: 'each table calling', preview: 'service' });
const refreshTablesSoon = debounce(() => loadTables(), 300);

const floor = createFloor({
  shopPath,
  keys,
  sessions,
  languages: () => languages,
  opened: (session) => tables.opened(session),
  focusSession: (sessionId) => tables.focusRow(sessionId),
  refreshSoon: refreshTablesSoon,
});
const tables = createSessions({
  shopPath,
  keys,
  sessions,
  refreshSoon: refreshTablesSoon,
  openBill: (session, mode, opener) => bill.open(session, mode, opener),
  openOrder: (session, opener) => staffOrder.open(session, opener),
  onChange: () => floor.render(),
});
const bill = createBill({
  keys,
  money: () => money,
  closedHere: (session, closedAt) => tables.closedHere(session, closedAt),
  refreshSoon: refreshTablesSoon,
});
const staffOrder = createStaffOrder({
  shopId,
  keys,
  onSent: (order, session) => {
    const said = `Ticket #${order.ticketNumber} sent to the kitchen for table ${session.tableLabel}: ${money(order.total)}.`;
    $('tables-status').textContent = said;
    announce(said);
    audit.refreshSoon();
  },
});
const service = createService({ shopId, chime, focusSession: (sessionId) => tables.focusRow(sessionId) });
const inventory = createInventory({ shopPath, keys });
const audit = createAudit({ shopPath, sessions });
const kitchen = createKitchenSettings({ shopPath, applyShop });
const printers = createPrinters({ shopPath, keys });
const team = createTeam({ shopId, shopPath, rights: () => rights });

const stream = new LiveStream({
  shopId,
  events: {
    'stock.changed': (change) => {
      if (may('inventory')) {
        inventory.applyStockChange(change);
        inventory.refreshSoon();
      }
      staffOrder.menuChanged();
    },
    'session.opened': () => may('sessions') && refreshTablesSoon(),
    'session.closed': () => may('sessions') && refreshTablesSoon(),
    'order.placed': () => may('audit') && audit.refreshSoon(),
    'service.requested': (req) => service.requested(req),
    'service.acknowledged': (req) => service.acknowledged(req),
    // A catalog save or a shop PATCH (languages, kitchen settings).
    'menu.changed': () => {
      readShop();
      staffOrder.menuChanged();
    },
  },
  resync: () =>
    Promise.all([
      may('inventory') && inventory.load(),
      may('sessions') && loadTables().then(() => may('audit') && audit.load()),
      !may('sessions') && may('audit') && audit.load(),
      service.load(),
      may('printers') && printers.load(),
      (may('staff') || may('devices')) && team.load(),
    ]),
});

$('kitchen-link').href = `/kitchen/${encodeURIComponent(shopId)}`;

// A saved menu may add or retire items: the inventory follows.
const menuEditor = createMenuEditor({ shopId, onSaved: () => inventory.refreshSoon() });

withStaffSignIn({
  shopId,
  start: async (signedIn) => {
    rights = signedIn;
    showView();
    await readShop();
    stream.start();
    if (may('catalog')) menuEditor.start();
  },
  stop: () => {
    stream.stop();
    rights = null;
  },
});

/** The shop: its currency, its languages (the QR cards say them) and the kitchen's settings. */
async function readShop() {
  try {
    applyShop(await loadShop(shopId));
  } catch (err) {
    if (err.status !== 401) showProblem(`Could not read the shop: ${problemText(err)}`);
  }
}

function applyShop(shop) {
  money = moneyFormatter(shop.currency);
  languages = Array.isArray(shop.languages) && shop.languages.length ? shop.languages.map(String) : ['en'];
  kitchen.fill(shop);
  floor.render();
}

/** The open and closed tables, then the floor (which shows who sits where). */
async function loadTables() {
  await tables.load();
  await floor.load();
}

// ---------------------------------------------------------------- views

const SERVICE_SECTIONS = ['tables', 'inventory', 'audit', 'kitchen', 'printers', 'team'];

/** The duties of which a section needs one; the roles that have them are in docs/api.md. */
const SECTION_DUTIES = {
  tables: ['tables', 'sessions'],
  inventory: ['inventory'],
  audit: ['audit'],
  kitchen: ['settings'],
  printers: ['printers'],
  team: ['staff', 'devices'],
  menu: ['catalog'],
};

const SECTION_NAMES = {
  tables: 'the tables',
  inventory: 'the inventory',
  audit: 'the order audit',
  kitchen: 'the kitchen settings',
  printers: 'the printers',
  team: 'the staff and devices',
  menu: 'the menu editor',
};

/** Whether the signed-in credential may see section `id` (everything before sign-in: the page is hidden). */
function allowed(id) {
  return !rights || SECTION_DUTIES[id].some(may);
}

/**
 * #menu shows the menu editor alone; any other hash the service sections.
 * Only what the credential's role may do is shown: its nav links too. A
 * section it may not see, asked for by its hash, says so instead.
 */
function showView(moved = false) {
  const wanted = location.hash.slice(1);
  const refused = SECTION_DUTIES[wanted] && !allowed(wanted);
  const menu = wanted === 'menu' && !refused;
  for (const id of SERVICE_SECTIONS) $(id).hidden = menu || refused || !allowed(id);
  $('menu').hidden = !menu;
  $('not-allowed').hidden = !refused;
  if (refused) {
    const role = rights.role ? `A ${rights.role} account` : 'This credential';
    $('not-allowed-text').textContent =
      `${role} cannot open ${SECTION_NAMES[wanted]}. Ask the shop's owner or a manager if you need it.`;
  }
  for (const a of document.querySelectorAll('.topbar-nav a[href^="#"]')) {
    const section = a.getAttribute('href').slice(1);
    a.hidden = Boolean(SECTION_DUTIES[section]) && !allowed(section);
  }
  for (const a of document.querySelectorAll('.topbar-nav a[href^="#"]')) {
    const current = menu ? a.getAttribute('href') === '#menu' : a.getAttribute('href') === location.hash;
    if (current) a.setAttribute('aria-current', menu ? 'page' : 'location');
    else a.removeAttribute('aria-current');
  }
  if (may('catalog')) menuEditor.setVisible(menu);
  if (!menu && may('printers')) printers.shown();
  if (!moved) return;
  // The target was hidden when the link was followed: go to it now.
  const target = refused
    ? $('not-allowed')
    : menu
      ? $('menu')
      : SERVICE_SECTIONS.includes(wanted) && $(wanted);
  if (target) {
    target.scrollIntoView({ block: 'start' });
    target.focus({ preventScroll: true });
  }
}
window.addEventListener('hashchange', () => showView(true));
showView();

// The calls banner sticks right under the top bar, however many lines it wraps to.
new ResizeObserver(() => {
  document.documentElement.style.setProperty('--topbar-height', `${document.querySelector('.topbar').offsetHeight}px`);
}).observe(document.querySelector('.topbar'));

// Every 30 s: ages (tables, calls) and 86 marks that ran out.
setInterval(() => {
  if ($('app').hidden) return;
  if (may('sessions')) tables.render();
  service.tick();
  if (may('inventory')) inventory.tick();
}, 30_000);
setInterval(() => {
  if (!$('app').hidden && may('sessions')) loadTables();
}, 15_000);
