// A dinner rush on the kitchen display (tests/14-kitchen-rush): a bistro
// with a grill and a bar set up through the HTTP API, a burst of staff
// orders, and readers for what the display shows, through the hooks listed
// at the top of web/kitchen.js and its parts (web/kitchen-*.js); the chime's
// counters serve the staff console's tests too. Every wait has a deadline
// (the contexts' default, WAIT_MS, unless given).

import { randomUUID } from 'node:crypto';

import { eventually } from './server.mjs';

/**
 * A bistro (USD), its items routed to stations:
 *   grill: Steak (required Doneness: Rare, Medium, Well done), Burger
 *          (toppings Cheese, Bacon, up to 2)
 *   bar:   Beer, Lemonade
 *   (none): Bread
 * Resolves to {shopId, name, items: {steak, burger, beer, lemonade, bread},
 * options: {rare, medium, wellDone}, toppings: {cheese, bacon},
 * stations: {menuItemId: station|null}}.
 */
export async function setupBistro(server, { name = 'E2E Bistro' } = {}) {
  const shop = await server.call('POST', '/api/v1/shops', {
    expect: 201,
    body: { name, currency: 'USD', timezone: 'UTC' },
  });
  const items = {
    steak: randomUUID(),
    burger: randomUUID(),
    beer: randomUUID(),
    lemonade: randomUUID(),
    bread: randomUUID(),
  };
  const options = { rare: randomUUID(), medium: randomUUID(), wellDone: randomUUID() };
  const toppings = { cheese: randomUUID(), bacon: randomUUID() };
  await server.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, {
    body: {
      toppings: [
        { toppingId: toppings.cheese, name: 'Cheese', price: 100 },
        { toppingId: toppings.bacon, name: 'Bacon', price: 150 },
      ],
      items: [
        {
          menuItemId: items.steak,
          name: 'Steak',
          category: 'Mains',
          price: 2400,
          station: 'grill',
          optionGroups: [
            {
              name: 'Doneness',
              minChoices: 1,
              maxChoices: 1,
              options: [
                { optionId: options.rare, name: 'Rare' },
                { optionId: options.medium, name: 'Medium' },
                { optionId: options.wellDone, name: 'Well done' },
              ],
            },
          ],
        },
        {
          menuItemId: items.burger,
          name: 'Burger',
          category: 'Mains',
          price: 1400,
          station: 'grill',
          toppingIds: [toppings.cheese, toppings.bacon],
          maxToppings: 2,
        },
        { menuItemId: items.beer, name: 'Beer', category: 'Drinks', price: 700, station: 'bar' },
        { menuItemId: items.lemonade, name: 'Lemonade', category: 'Drinks', price: 400, station: 'bar' },
        { menuItemId: items.bread, name: 'Bread', category: 'Sides', price: 300 },
      ],
    },
  });
  const stations = {
    [items.steak]: 'grill',
    [items.burger]: 'grill',
    [items.beer]: 'bar',
    [items.lemonade]: 'bar',
    [items.bread]: null,
  };
  return { shopId: shop.shopId, name: shop.name, items, options, toppings, stations };
}

/**
 * The lines of the `i`th order of a rush: one to three lines, typical of a
 * table (a main or two, a drink, sometimes bread), varied but repeatable.
 */
export function rushLines(shop, i) {
  const { items, options, toppings } = shop;
  const doneness = [options.rare, options.medium, options.medium, options.wellDone][i % 4];
  const mains = [
    { menuItemId: items.steak, quantity: 1 + (i % 2), optionIds: [doneness] },
    { menuItemId: items.burger, quantity: 1, toppingIds: i % 2 === 0 ? [toppings.cheese] : [] },
    {
      menuItemId: items.steak,
      quantity: 1,
      optionIds: [doneness],
      note: i % 5 === 0 ? 'sauce on the side' : undefined,
    },
  ][i % 3];
  const drink = [
    { menuItemId: items.beer, quantity: 2 },
    { menuItemId: items.lemonade, quantity: 1 },
    null,
  ][i % 3];
  const lines = [mains];
  if (drink) lines.push(drink);
  if (i % 4 === 1) lines.push({ menuItemId: items.bread, quantity: 1 });
  return lines.map((line) => Object.fromEntries(Object.entries(line).filter(([, v]) => v !== undefined)));
}

/**
 * Opens `tables` tables and places `count` staff orders over them, one
 * after the other (so the oldest is the first). Resolves to the orders as
 * the API answered them, oldest first.
 */
export async function placeRush(server, shop, { count, tables = 6, from = 0, sessions } = {}) {
  const seated = sessions ?? [];
  for (let t = seated.length; t < tables; t += 1) {
    seated.push(await server.openTable(shop.shopId, `T${t + 1}`));
  }
  const placed = [];
  for (let i = from; i < from + count; i += 1) {
    placed.push(await staffOrder(server, seated[i % seated.length], rushLines(shop, i)));
  }
  return { orders: placed, sessions: seated };
}

/** One staff order (no cooldown, no duplicate rule): resolves to the order. */
export function staffOrder(server, session, items) {
  return server.call('POST', `/api/v1/sessions/${session.sessionId}/staff-orders`, {
    expect: 201,
    headers: { 'Idempotency-Key': randomUUID() },
    body: { items },
  });
}

/** The shop's open orders as the API has them (oldest first). */
export async function openOrders(server, shopId, statuses = 'placed,accepted,preparing,ready') {
  const body = await server.call('GET', `/api/v1/shops/${shopId}/orders?status=${statuses}&limit=500`);
  return body.orders;
}

/**
 * The kitchen display of `shop` at `/kitchen/{shopId}{query}`, signed in
 * (the sign-in is the gesture that lets it play sound), its stream live.
 * `clock: true` installs Playwright's fake clock first (running from now):
 * move it with `fastForward`.
 */
export async function openKitchenAt(scene, shop, { query = '', context, name = 'kitchen', clock = false } = {}) {
  const page = await scene.page(context ?? (await scene.context()), name);
  if (clock) await installClock(page);
  await page.goto(scene.server.url(`/kitchen/${shop.shopId}${query}`));
  await scene.signIn(page);
  await page.locator('#shop-name', { hasText: shop.name }).waitFor();
  return page;
}

/**
 * How far each page's fake clock was moved. The pages set their clock by
 * the server's `Date` header (console.js's noteServerDate), so a clock moved
 * in the browser alone is put back by the next API answer; the page's API
 * answers carry a `Date` moved as far, as if time passed for the server too.
 */
const clockShift = new WeakMap();

async function installClock(page) {
  await page.clock.install({ time: new Date() });
  clockShift.set(page, 0);
  // Not the event stream: it stays open, and the pages read no time from it.
  await page.route(
    (url) => url.pathname.startsWith('/api/v1/') && !url.pathname.endsWith('/events'),
    async (route) => {
      const response = await route.fetch();
      const date = new Date(Date.parse(response.headers().date) + clockShift.get(page)).toUTCString();
      await route.fulfill({ response, headers: { ...response.headers(), date } });
    },
  );
}

/** Moves the fake clock of a page opened with `clock: true` on by `ms`, for the server's answers too. */
export async function fastForward(page, ms) {
  clockShift.set(page, clockShift.get(page) + ms);
  await page.clock.fastForward(ms);
}

/** The tickets on the board in display order (data-position): [{orderId, status, position, ticket}]. */
export async function boardTickets(page) {
  const tickets = await page.locator('#board li.ticket[data-order-id]').evaluateAll((els) =>
    els.map((li) => ({
      orderId: li.dataset.orderId,
      status: li.dataset.status,
      position: Number(li.dataset.position),
      ticket: Number(li.dataset.ticketNumber),
    })),
  );
  return tickets.sort((a, b) => a.position - b.position);
}

/**
 * The tickets wholly on screen: inside the viewport and inside the board's
 * visible (scrolled) box, in reading order (top to bottom, then left to
 * right): [{orderId, top, left, bottom, right}].
 */
export function fullyVisibleTickets(page) {
  return page.evaluate(() => {
    const board = document.getElementById('board').getBoundingClientRect();
    const top = Math.max(0, board.top);
    const left = Math.max(0, board.left);
    const bottom = Math.min(window.innerHeight, board.bottom);
    const right = Math.min(window.innerWidth, board.right);
    return [...document.querySelectorAll('#board li.ticket[data-order-id]')]
      .map((li) => {
        const r = li.getBoundingClientRect();
        return { orderId: li.dataset.orderId, top: r.top, left: r.left, bottom: r.bottom, right: r.right };
      })
      .filter((r) => r.top >= top - 0.5 && r.left >= left - 0.5 && r.bottom <= bottom + 0.5 && r.right <= right + 0.5)
      .sort((a, b) => a.top - b.top || a.left - b.left);
  });
}

/**
 * What all-day counts should say for `orders` (the API's): per menu item
 * the quantity on placed/accepted/preparing tickets, and per variant (its
 * options' names, then "+ topping" names, joined by ", "; "plain" for
 * neither) when some line of the item has a choice. `lineShown(line)` keeps
 * a station's lines. Resolves to {menuItemId: {quantity, variants: {label: n}}}.
 */
export function expectedAllDay(orders, { lineShown = () => true } = {}) {
  const counts = {};
  for (const order of orders) {
    if (!['placed', 'accepted', 'preparing'].includes(order.status)) continue;
    for (const line of order.items) {
      if (!lineShown(line)) continue;
      const item = (counts[line.menuItemId] ??= { quantity: 0, variants: {} });
      item.quantity += line.quantity;
      const parts = [...(line.options ?? []).map((o) => o.name), ...(line.toppings ?? []).map((t) => `+ ${t.name}`)];
      const label = parts.length ? parts.join(', ') : 'plain';
      item.variants[label] = (item.variants[label] ?? 0) + line.quantity;
    }
  }
  for (const item of Object.values(counts)) {
    const labels = Object.keys(item.variants);
    if (labels.length === 1 && labels[0] === 'plain') item.variants = {};
  }
  return counts;
}

/** The all-day counts the page shows, in the shape of expectedAllDay. */
export function allDayOnPage(page) {
  return page.locator('#all-day-list > li[data-all-day-item]').evaluateAll((els) =>
    Object.fromEntries(
      els.map((li) => [
        li.dataset.allDayItem,
        {
          quantity: Number(li.dataset.quantity),
          variants: Object.fromEntries(
            [...li.querySelectorAll('li[data-variant]')].map((v) => [v.dataset.variant, Number(v.dataset.quantity)]),
          ),
        },
      ]),
    ),
  );
}

/** The chime counters of the sound toggle: {played, muted, audio, pressed}. */
export async function chimes(page) {
  return page.locator('#sound-toggle').evaluate((b) => ({
    played: Number(b.dataset.chimes),
    muted: Number(b.dataset.chimesMuted),
    audio: b.dataset.audio,
    pressed: b.getAttribute('aria-pressed'),
  }));
}

/**
 * Counts the WebAudio oscillators the context's pages start (the chimes
 * are synthesised): read back with `oscillators(page)`.
 */
export async function countOscillators(context) {
  await context.addInitScript(() => {
    window.__e2eOscillators = 0;
    const start = OscillatorNode.prototype.start;
    OscillatorNode.prototype.start = function (...args) {
      window.__e2eOscillators += 1;
      return start.apply(this, args);
    };
  });
}

export function oscillators(page) {
  return page.evaluate(() => window.__e2eOscillators);
}

/** Resolves once the page's AudioContext runs (the chime can sound). */
export function audioRunning(page) {
  return eventually(async () => (await page.locator('#sound-toggle').getAttribute('data-audio')) === 'running', {
    what: 'the AudioContext running after the sign-in',
  });
}
