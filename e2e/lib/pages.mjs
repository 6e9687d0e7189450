// What a person does on the pages, through the test hooks each page lists at
// the top of its script (web/guest.js, web/kitchen.js, web/staff.js,
// web/console.js), and a QR decoder for screenshots.

import jsQR from 'jsqr';
import { PNG } from 'pngjs';

// ── guest page ──────────────────────────────────────────────────────────

/** Ticks `toppings` on the item, then taps its Add button; waits for the cart line. */
export async function addToCart(page, itemId, { toppings = [] } = {}) {
  for (const toppingId of toppings) {
    await page.locator(`input[data-item-id="${itemId}"][data-topping-id="${toppingId}"]`).check();
  }
  const lines = page.locator(`#cart-lines > li[data-item-id="${itemId}"]`);
  const before = await quantityIn(lines);
  await page.locator(`button[data-action="add"][data-item-id="${itemId}"]`).click();
  await page.waitForFunction(
    ({ sel, want }) =>
      [...document.querySelectorAll(sel)].reduce((n, li) => n + Number(li.dataset.quantity), 0) === want,
    { sel: `#cart-lines > li[data-item-id="${itemId}"]`, want: before + 1 },
  );
}

async function quantityIn(lines) {
  const quantities = await lines.evaluateAll((els) => els.map((li) => Number(li.dataset.quantity)));
  return quantities.reduce((a, b) => a + b, 0);
}

/**
 * Records every value #status[data-state] takes from now on (idle, sending,
 * retrying, success, info, error), read back with `statusStates(page)`.
 */
export async function recordStatusStates(page) {
  await page.evaluate(() => {
    const box = document.getElementById('status');
    window.__e2eStatusStates = [box.dataset.state];
    new MutationObserver(() => {
      const states = window.__e2eStatusStates;
      if (states[states.length - 1] !== box.dataset.state) states.push(box.dataset.state);
    }).observe(box, { attributes: true, attributeFilter: ['data-state'] });
  });
}

export function statusStates(page) {
  return page.evaluate(() => window.__e2eStatusStates);
}

/** The table's orders as the guest page lists them: [{orderId, status, ticket, label}]. */
export function guestOrders(page) {
  return page.locator('#orders > li[data-order-id]').evaluateAll((els) =>
    els.map((li) => ({
      orderId: li.dataset.orderId,
      status: li.dataset.orderStatus,
      ticket: Number(li.dataset.ticket),
      label: li.querySelector('[data-role="status"]')?.textContent.trim(),
    })),
  );
}

/**
 * Records the API requests a page (or every page of a browser context)
 * sends from now on, with the credential each carries: [{method, path,
 * params, bearer, pin}] (bearer: the Authorization header's token; pin:
 * X-Session-PIN; both null if absent). The event stream's credential is in
 * `params` (access_token or pin).
 */
export function recordApiRequests(pageOrContext) {
  const requests = [];
  pageOrContext.on('request', async (req) => {
    const url = new URL(req.url());
    if (!url.pathname.startsWith('/api/')) return;
    const headers = await req.allHeaders();
    requests.push({
      method: req.method(),
      path: url.pathname,
      params: Object.fromEntries(url.searchParams),
      bearer: headers.authorization?.replace(/^Bearer /, '') ?? null,
      pin: headers['x-session-pin'] ?? null,
    });
  });
  return requests;
}

/** Chromium's network throttling for one page (DevTools protocol). */
export async function throttle(context, page, { latencyMs, bytesPerSecond }) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: latencyMs,
    downloadThroughput: bytesPerSecond,
    uploadThroughput: bytesPerSecond,
  });
  return {
    async off() {
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      await cdp.detach();
    },
  };
}

// ── kitchen display ─────────────────────────────────────────────────────

/** The tickets on the board: [{orderId, status, ticket, table}]. */
export function kitchenTickets(page) {
  return page.locator('#board li.ticket[data-order-id]').evaluateAll((els) =>
    els.map((li) => ({
      orderId: li.dataset.orderId,
      status: li.dataset.status,
      ticket: Number(li.dataset.ticketNumber),
      table: li.dataset.table,
    })),
  );
}

/** The ticket of `orderId` on the board. */
export function ticket(page, orderId, status) {
  const state = status ? `[data-status="${status}"]` : '';
  return page.locator(`#board li.ticket[data-order-id="${orderId}"]${state}`);
}

// ── QR codes ────────────────────────────────────────────────────────────

/** The text of the QR code in a PNG image (null if none is found). */
export function decodeQr(png) {
  const image = PNG.sync.read(png);
  const pixels = new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length);
  const code = jsQR(pixels, image.width, image.height);
  return code ? code.data : null;
}

/** Width and height of a PNG image (and a check that it is one). */
export function pngSize(png) {
  const image = PNG.sync.read(png);
  return { width: image.width, height: image.height };
}
