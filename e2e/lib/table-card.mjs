// The floor of issue 17 as the guest page meets it (tests/15-table-card):
// permanent table cards (/q/{code}) that staff seat parties at, the PIN a
// party is given, service requests and the kitchen's pace, set up and read
// through the API. Page hooks are the ones listed at the top of
// web/guest.js; every wait has a deadline (the contexts' default unless given).

import { menuShown } from './floor.mjs';

/** A table with its permanent card: {tableId, name, tableUrl, code, sessionId: null, createdAt}. */
export async function createTable(server, shopId, name) {
  const table = await server.call('POST', `/api/v1/shops/${shopId}/tables`, { expect: 201, body: { name } });
  return { ...table, code: new URL(table.tableUrl).pathname.replace(/^\/q\//, '') };
}

/** Staff seat a party at the table: the session (with its pin). */
export function seatParty(server, shopId, table) {
  return server.call('POST', `/api/v1/shops/${shopId}/sessions`, { expect: 201, body: { tableId: table.tableId } });
}

/** The table card opened on `page`; resolves once its gate shows something other than "checking". */
export async function openCard(page, table) {
  await page.goto(table.tableUrl);
  await page.locator('#gate:is([data-state="not-open"], [data-state="pin"], [data-state="offline"])').waitFor();
}

/** Types `pin` into the card's PIN page and sends it (Enter, as a phone keyboard's "Go"). */
export async function sendPin(page, pin) {
  const input = page.locator('#pin-input');
  await input.fill(pin);
  await input.press('Enter');
}

/** The card opened, the party's PIN given: resolves once the menu is shown and live. */
export async function enterWithPin(page, table, party) {
  await openCard(page, table);
  await page.locator('#gate[data-state="pin"]').waitFor();
  await sendPin(page, party.pin);
  await menuShown(page);
}

/** The table's open service requests as staff see them (oldest first). */
export async function openRequests(server, shopId, sessionId) {
  const { requests } = await server.call('GET', `/api/v1/shops/${shopId}/service-requests?status=open`);
  return requests.filter((r) => r.sessionId === sessionId);
}

/**
 * The kitchen cooks `orders` through the API: each accepted, then ready at
 * least `cookMs` after the last was accepted. The server counts a kitchen
 * time in whole seconds before rounding it up to minutes (GET …/wait): an
 * order cooked at once counts 0 min, one of a second or more (under a
 * minute) 1 min.
 */
export async function cook(server, orders, { cookMs = 0 } = {}) {
  for (const order of orders) await server.setStatus(order.orderId, 'accepted');
  if (cookMs > 0) await new Promise((resolve) => setTimeout(resolve, cookMs));
  for (const order of orders) await server.setStatus(order.orderId, 'ready');
}

/** The answers a page gets to its PIN-for-token exchanges from now on: [{status, code}]. */
export function recordExchanges(page) {
  const answers = [];
  page.on('response', async (res) => {
    const req = res.request();
    if (req.method() !== 'POST' || !new URL(req.url()).pathname.endsWith('/access')) return;
    let code = null;
    try { code = (await res.json()).code ?? null; } catch { /* a body that is not JSON */ }
    answers.push({ status: res.status(), code });
  });
  return answers;
}

/** The Idempotency-Keys of the service requests a page POSTs from now on. */
export function recordServicePosts(page) {
  const keys = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && new URL(req.url()).pathname.endsWith('/service-requests')) {
      keys.push(req.headers()['idempotency-key'] ?? null);
    }
  });
  return keys;
}
