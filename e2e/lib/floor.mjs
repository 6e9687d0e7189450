// What a restaurant floor does to the guest page (tests/13-guest-defects,
// issue 17): phones of other sizes and clocks, links tapped and pages
// reloaded, the connection lost and back, a keyboard instead of a finger, a
// shop on the other side of the world with its kitchen and console. Hooks
// are the ones listed at the top of web/guest.js, web/kitchen.js,
// web/staff.js and web/console.js. Every wait has a deadline (the contexts'
// default, WAIT_MS, unless given).

import { randomUUID } from 'node:crypto';

import { PHONE, WAIT_MS } from './scene.mjs';

/** The narrowest phone still sold (iPhone SE 1st gen, small Androids). */
export const NARROW_PHONE = { ...PHONE, viewport: { width: 320, height: 640 } };

/**
 * A browser context (one device) whose clock is set to `timezoneId`: the
 * scene's contexts all run on UTC, which hides whose time a page shows.
 */
export async function deviceIn(scene, device, timezoneId) {
  const context = await scene.browser.newContext({ ...device, locale: 'en-US', timezoneId });
  context.setDefaultTimeout(WAIT_MS);
  context.setDefaultNavigationTimeout(20_000);
  return context;
}

/** Resolves once the guest page shows the menu and its stream is live. */
export async function menuShown(page) {
  await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
  await page.locator('#menu-items[aria-busy="false"] .item[data-item-id]').first().waitFor();
  await page.locator('#live[data-state="live"]').waitFor({ state: 'attached' });
}

/** The table's guest token as the page keeps it (sessionStorage), or null. */
export function storedToken(page, sessionId) {
  return page.evaluate((id) => sessionStorage.getItem(`ordergate.guestToken.${id}`), sessionId);
}

/** The table's orders as staff read them (no guest credential involved), newest first. */
export async function staffSessionOrders(server, session) {
  const body = await server.call('GET', `/api/v1/sessions/${session.sessionId}/orders?limit=100`);
  return body.orders;
}

/**
 * Presses Tab until `isTarget` (run in the page on document.activeElement)
 * holds; resolves to how many presses it took. Throws after `max`.
 */
export async function tabUntil(page, isTarget, { max = 60, what = 'the target' } = {}) {
  for (let presses = 1; presses <= max; presses++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(isTarget)) return presses;
  }
  const at = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 120));
  throw new Error(`${what} was not reached in ${max} tabs (focus on ${at})`);
}

/**
 * Where the boxes of `selector`'s elements sit (CSS px, relative to the
 * viewport), and on how many lines their text runs (counted from the text's
 * own line boxes, so a flex item that wraps inside counts as two):
 * [{text, left, right, top, bottom, lines}].
 */
export function boxes(page, selector) {
  return page.locator(selector).evaluateAll((els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      // The line boxes of its text, told apart by where their middles are.
      const middles = [];
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const x of range.getClientRects()) if (x.width > 0) middles.push((x.top + x.bottom) / 2);
      }
      const lines = middles
        .sort((a, b) => a - b)
        .filter((m, i, all) => i === 0 || m - all[i - 1] > 6).length;
      return { text: el.textContent.trim(), left: r.left, right: r.right, top: r.top, bottom: r.bottom, lines };
    }),
  );
}

// ── a shop far from UTC ─────────────────────────────────────────────────

/**
 * A shop in `timezone`, set up through the API, with two dishes:
 *   Mains: Fish and chips $18.50; Drinks: Flat white $5.00
 * Resolves to {shopId, name, timezone, items: {fish, coffee}}.
 */
export async function setupShopIn(server, timezone, { name = `E2E Bistro ${timezone}` } = {}) {
  const shop = await server.call('POST', '/api/v1/shops', {
    expect: 201,
    body: { name, currency: 'NZD', timezone },
  });
  const items = { fish: randomUUID(), coffee: randomUUID() };
  await server.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, {
    body: {
      toppings: [],
      items: [
        { menuItemId: items.fish, name: 'Fish and chips', category: 'Mains', price: 1850 },
        { menuItemId: items.coffee, name: 'Flat white', category: 'Drinks', price: 500 },
      ],
    },
  });
  return { shopId: shop.shopId, name: shop.name, timezone: shop.timezone, items };
}

/** A staff page (`kitchen` or `staff`) of `shop`, signed in, its stream live. */
export async function openStaffPage(scene, shop, kind, { context, name = kind } = {}) {
  const page = await scene.page(context, name);
  await page.goto(scene.server.url(`/${kind}/${shop.shopId}`));
  await scene.signIn(page);
  await page.locator('#shop-name', { hasText: shop.name }).waitFor();
  return page;
}

// ── clocks ──────────────────────────────────────────────────────────────

/** Minutes after midnight of instant `iso` on `timeZone`'s wall clock. */
export function wallMinutes(iso, timeZone) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return (Number(parts.hour) % 24) * 60 + Number(parts.minute);
}

/**
 * The clock time a page shows in `text` ("1:05 PM", "13:05", "01:05 PM",
 * "Placed at 01:05 PM", "Dec 1, 01:05 PM · just now") as minutes after
 * midnight; null if it shows none.
 */
export function shownMinutes(text) {
  const m = /(\d{1,2}):(\d{2})(?:\s*([AP])\.?M\.?)?/i.exec(text ?? '');
  if (!m) return null;
  let hour = Number(m[1]) % 12;
  if (!m[3]) hour = Number(m[1]);
  else if (m[3].toUpperCase() === 'P') hour += 12;
  return hour * 60 + Number(m[2]);
}

/**
 * The instant a wall-clock time (`YYYY-MM-DDTHH:MM`) is on `timeZone`'s
 * clock, found by trying every offset clocks use (−12 h to +14 h, in
 * quarter hours): independent of the pages' own arithmetic.
 */
export function wallToInstant(local, timeZone) {
  const [date, time] = local.split('T');
  const [y, mo, d] = date.split('-').map(Number);
  const [h, mi] = time.split(':').map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi);
  const fmt = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  });
  for (let q = -12 * 4; q <= 14 * 4; q++) {
    const at = wall - q * 15 * 60_000;
    const p = Object.fromEntries(fmt.formatToParts(new Date(at)).map((x) => [x.type, x.value]));
    if (`${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}` === local) return new Date(at).toISOString();
  }
  throw new Error(`${local} does not exist in ${timeZone}`);
}

/** `YYYY-MM-DDTHH:MM` of instant `ms` on `timeZone`'s wall clock. */
export function instantToWall(ms, timeZone) {
  const fmt = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  });
  const p = Object.fromEntries(fmt.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}
