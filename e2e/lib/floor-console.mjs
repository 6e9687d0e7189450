// The floor in the staff console (tests/16-floor, issue 17): tables made
// once with their QR cards, parties seated, tables calling, orders entered
// by staff, the kitchen's settings. Hooks are the ones listed at the top of
// web/staff.js and web/console.js (and web/kitchen.js for the display).
// Every wait has a deadline (the contexts' default, WAIT_MS, unless given).

import { randomUUID } from 'node:crypto';

/** The staff console of `shop`, signed in (the sign-in is the gesture that lets it play sound), its floor read. */
export async function openConsole(scene, shop, { context, name = 'staff' } = {}) {
  const page = await scene.page(context ?? (await scene.context()), name);
  await page.goto(scene.server.url(`/staff/${shop.shopId}`));
  await scene.signIn(page);
  await page.locator('#shop-name', { hasText: shop.name }).waitFor();
  const { tables } = await scene.server.call('GET', `/api/v1/shops/${shop.shopId}/tables`);
  await page.locator(`#floor-count:text-is("${tables.length}")`).waitFor();
  return page;
}

/** Types a name into "Add a table to the floor" and submits it (the answer is awaited by the caller). */
export async function submitTable(page, name) {
  await page.locator('#new-table-name').fill(name);
  await page.locator('#create-table-form button[type=submit]').click();
}

/** A table made and seated through the API: resolves to {table, session}. */
export async function seatedTable(server, shop, name) {
  const table = await server.call('POST', `/api/v1/shops/${shop.shopId}/tables`, { expect: 201, body: { name } });
  const session = await server.call('POST', `/api/v1/shops/${shop.shopId}/sessions`, {
    expect: 201,
    body: { tableId: table.tableId },
  });
  return { table, session };
}

/** A guest at `session` (with its PIN) calls staff (`call`) or asks for the bill: resolves to the raw response. */
export function guestCalls(server, session, kind) {
  return server.request('POST', `/api/v1/sessions/${session.sessionId}/service-requests`, {
    auth: { pin: session.pin },
    headers: { 'Idempotency-Key': randomUUID() },
    body: { kind },
  });
}

/** The shop's service requests as the API has them (`open` or `acknowledged`), oldest first. */
export async function serviceRequests(server, shopId, status) {
  const body = await server.call('GET', `/api/v1/shops/${shopId}/service-requests?status=${status}`);
  return body.requests;
}

/**
 * Replaces window.print (a headless browser has no print dialog) with a
 * counter, `window.__e2ePrints`. The page's print classes stay on until
 * `endPrint`.
 */
export function stubPrint(page) {
  return page.evaluate(() => {
    window.__e2ePrints = 0;
    window.print = () => {
      window.__e2ePrints += 1;
    };
  });
}

/** Back from a print: screen media again and the `afterprint` a real dialog fires on closing. */
export async function endPrint(page) {
  await page.emulateMedia({ media: 'screen' });
  await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
}

/** The lines of the order dialog's draft: [{menuItemId, quantity, text, error, warning}]. */
export function draftLines(page) {
  return page.locator('#order-draft > li[data-line-key]').evaluateAll((els) =>
    els.map((li) => ({
      menuItemId: li.dataset.menuItemId,
      quantity: Number(li.dataset.quantity),
      text: li.querySelector('.order-line-text').textContent,
      error: li.querySelector('[data-role=line-error]').textContent,
      warning: li.querySelector('[data-role=line-warning]')?.textContent ?? '',
    })),
  );
}

/** Whether the element of `selector` lies wholly inside the viewport. */
export function whollyOnScreen(page, selector) {
  return page.locator(selector).evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  });
}
