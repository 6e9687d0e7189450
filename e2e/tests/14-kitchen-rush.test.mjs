// Issue 17, the kitchen display in a rush: a bistro with a grill and a bar
// (lib/kitchen-rush.mjs) and a burst of orders.
//   - 18 tickets at 1280×800: at least 12 wholly on screen, oldest first,
//     left to right; saves kitchen-rush.png.
//   - Keyboard / bump bar: 2 then Enter moves the second ticket on (the API
//     says so); arrows move the selection; the legend and "?" help are there.
//   - All-day counts equal what the API's open orders add up to, and follow
//     a change live.
//   - ?station=bar shows only bar lines (a ticket without one is not shown),
//     counts only them, follows a catalog change (menu.changed), and the
//     picker goes back to all stations.
//   - Age colours: amber after 5 min, red after 10 (Playwright's clock), then
//     the shop's thresholds (PATCH /api/v1/shops/{id}), followed live; the
//     settings dialog shows them and sets none.
//   - "Recently done" survives a reload.
//   - Recall: Enter bumps, R recalls and the API shows the previous status;
//     from "Recently done" a ticket goes back where it was bumped from.
//   - Sound: a chime (WebAudio oscillators) for a new ticket, none while
//     muted; mute is remembered.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import {
  allDayOnPage,
  audioRunning,
  boardTickets,
  chimes,
  countOscillators,
  expectedAllDay,
  fastForward,
  fullyVisibleTickets,
  openKitchenAt,
  openOrders,
  oscillators,
  placeRush,
  setupBistro,
  staffOrder,
} from '../lib/kitchen-rush.mjs';
import { pngSize, ticket } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

const RUSH_SCREEN = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };

describe('the kitchen display in a rush (issue 17)', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('18 tickets at 1280×800: 12 or more on screen, oldest first; keys; all-day counts', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Rush Bistro' });
      const { orders } = await placeRush(server, shop, { count: 18 });
      const kitchen = await openKitchenAt(scene, shop, { context: await scene.context(RUSH_SCREEN) });
      await kitchen.locator('#board li.ticket').nth(17).waitFor();
      assert.equal(await kitchen.locator('#board').getAttribute('data-layout'), 'flow');
      assert.equal(await kitchen.locator('[data-count="placed"]').textContent(), '18');

      // At least 12 wholly visible, in the order they were placed.
      const visible = await fullyVisibleTickets(kitchen);
      assert.ok(visible.length >= 12, `only ${visible.length} of 18 tickets are wholly on screen`);
      assert.deepEqual(
        visible.map((v) => v.orderId),
        orders.slice(0, visible.length).map((o) => o.orderId),
        'the oldest tickets first, left to right, row by row',
      );
      const rows = [...new Set(visible.map((v) => Math.round(v.top)))];
      const firstRow = visible.filter((v) => Math.round(v.top) === rows[0]);
      assert.ok(rows.length >= 2 && firstRow.length >= 3, 'tickets flow across the screen');
      const listed = await boardTickets(kitchen);
      assert.deepEqual(listed.map((t) => t.orderId), orders.map((o) => o.orderId), 'display order = age');
      assert.equal(await ticket(kitchen, orders[0].orderId).locator('.ticket-key').textContent(), '1');
      assert.equal(await ticket(kitchen, orders[9].orderId).locator('.ticket-key').textContent(), '');
      assert.match(await ticket(kitchen, orders[0].orderId).locator('.ticket-status').textContent(), /New/);

      // All-day counts: what the API's open orders add up to.
      assert.deepEqual(await allDayOnPage(kitchen), expectedAllDay(await openOrders(server, shop.shopId)));
      const steak = kitchen.locator(`#all-day-list > li[data-all-day-item="${shop.items.steak}"]`);
      assert.ok(Number(await steak.getAttribute('data-quantity')) > 0);
      assert.equal(await steak.locator('li[data-variant]').count(), 3, 'Rare, Medium and Well done told apart');

      // The legend and the help.
      assert.match(await kitchen.locator('#key-legend').textContent(), /1.*9.*select.*Enter.*R.*recall/s);
      await kitchen.keyboard.press('?');
      await kitchen.locator('#help-dialog[open]').waitFor();
      assert.match(await kitchen.locator('#help-dialog').textContent(), /Backspace/);
      await kitchen.keyboard.press('Escape');
      await kitchen.locator('#help-dialog').waitFor({ state: 'hidden' });

      // 2 selects the second ticket (ring, focus, announced); Enter moves it on.
      const second = ticket(kitchen, orders[1].orderId);
      await kitchen.keyboard.press('2');
      await kitchen.locator(`#board li.ticket[data-selected="true"][data-order-id="${orders[1].orderId}"]`).waitFor();
      assert.equal(await second.evaluate((el) => el === document.activeElement), true, 'the selection has the focus');
      await eventually(async () => /^2 of 18: ticket 2\b/.test(await kitchen.locator('#announcer').textContent()), {
        what: 'the selection announced',
      });
      await kitchen.keyboard.press('Enter');
      await ticket(kitchen, orders[1].orderId, 'accepted').waitFor();
      const moved = await server.call('GET', `/api/v1/orders/${orders[1].orderId}`);
      assert.equal(moved.status, 'accepted');
      assert.equal(moved.version, orders[1].version + 1);
      assert.equal((await server.call('GET', `/api/v1/orders/${orders[0].orderId}`)).status, 'placed', 'not the first');
      assert.equal(await second.getAttribute('data-selected'), 'true', 'the selection stays on the ticket');

      // Arrows: right is the next ticket; down the one below it.
      await kitchen.keyboard.press('ArrowRight');
      await kitchen.locator(`#board li.ticket[data-selected="true"][data-order-id="${orders[2].orderId}"]`).waitFor();
      const from = await ticket(kitchen, orders[2].orderId).boundingBox();
      await kitchen.keyboard.press('ArrowDown');
      const below = kitchen.locator('#board li.ticket[data-selected="true"]');
      await eventually(async () => (await below.getAttribute('data-order-id')) !== orders[2].orderId, {
        what: 'the selection moved down',
      });
      const to = await below.boundingBox();
      assert.ok(to.y > from.y + from.height - 1 && Math.abs(to.x - from.x) < 2, 'the ticket right below');

      // Counts follow live: the API moves two tickets on, past "pending".
      await server.setStatus(orders[0].orderId, 'ready');
      await server.setStatus(orders[3].orderId, 'cancelled');
      await server.setStatus(orders[4].orderId, 'preparing');
      await ticket(kitchen, orders[0].orderId, 'ready').waitFor();
      await ticket(kitchen, orders[3].orderId).waitFor({ state: 'detached' });
      await ticket(kitchen, orders[4].orderId, 'preparing').waitFor();
      const expected = expectedAllDay(await openOrders(server, shop.shopId));
      await eventually(
        async () => {
          assert.deepEqual(await allDayOnPage(kitchen), expected);
          return true;
        },
        { what: 'the all-day counts updated live' },
      );
      // The ready one goes after the rest, past the "Ready to serve" divider.
      const afterMoves = await boardTickets(kitchen);
      assert.equal(afterMoves.at(-1).orderId, orders[0].orderId);
      assert.equal(await kitchen.locator('#col-ready').isVisible(), true);

      const shot = await scene.screenshot(kitchen, 'kitchen-rush');
      assert.deepEqual(pngSize(await readFile(shot)), { width: 1280, height: 800 });
    }));

  test('?station=bar shows only the bar’s lines, follows a catalog change, and can go back to all', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Station Bistro' });
      const { orders } = await placeRush(server, shop, { count: 6 });
      const barItems = new Set([shop.items.beer, shop.items.lemonade]);
      const withBar = orders.filter((o) => o.items.some((l) => barItems.has(l.menuItemId)));
      const withoutBar = orders.filter((o) => !o.items.some((l) => barItems.has(l.menuItemId)));
      assert.ok(withBar.length >= 2 && withoutBar.length >= 1, 'the rush has both kinds of ticket');

      const bar = await openKitchenAt(scene, shop, { query: '?station=bar', name: 'kitchen-bar' });
      assert.equal(await bar.locator('#station-name').textContent(), 'Bar station');
      assert.equal(await bar.locator('#station-select').inputValue(), 'bar');
      await ticket(bar, withBar.at(-1).orderId).waitFor();
      assert.deepEqual(
        (await boardTickets(bar)).map((t) => t.orderId),
        withBar.map((o) => o.orderId),
        'only the tickets with a bar line, oldest first',
      );
      for (const order of withBar) {
        const card = ticket(bar, order.orderId);
        const lines = await card.locator('li[data-line]').evaluateAll((els) => els.map((li) => li.dataset.menuItemId));
        assert.deepEqual(
          lines,
          order.items.filter((l) => barItems.has(l.menuItemId)).map((l) => l.menuItemId),
          `ticket ${order.ticketNumber} shows its bar lines only`,
        );
        const others = order.items.length - lines.length;
        if (others) assert.equal(await card.locator('.ticket-others').getAttribute('data-other-lines'), String(others));
      }
      const barOnly = (line) => barItems.has(line.menuItemId);
      const barCounts = expectedAllDay(await openOrders(server, shop.shopId), { lineShown: barOnly });
      assert.deepEqual(await allDayOnPage(bar), barCounts);

      // The catalog moves Lemonade to the grill: the bar screen follows (menu.changed).
      const catalog = await server.call('GET', `/api/v1/shops/${shop.shopId}/catalog`);
      const { toppings, items } = catalog;
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, {
        body: {
          toppings,
          items: items.map((item) => (item.menuItemId === shop.items.lemonade ? { ...item, station: 'grill' } : item)),
        },
      });
      await eventually(
        async () => (await bar.locator(`#board li[data-menu-item-id="${shop.items.lemonade}"]`).count()) === 0,
        { what: 'the lemonade lines gone from the bar screen' },
      );
      const beerOnly = (line) => line.menuItemId === shop.items.beer;
      const withBeer = orders.filter((o) => o.items.some(beerOnly));
      assert.deepEqual((await boardTickets(bar)).map((t) => t.orderId), withBeer.map((o) => o.orderId));
      const beerCounts = expectedAllDay(await openOrders(server, shop.shopId), { lineShown: beerOnly });
      assert.deepEqual(await allDayOnPage(bar), beerCounts);

      // Back to every station, without a reload.
      await bar.locator('#station-select').selectOption('');
      await ticket(bar, withoutBar[0].orderId).waitFor();
      assert.equal(new URL(bar.url()).searchParams.has('station'), false);
      assert.equal(await bar.locator('#station-name').textContent(), 'All stations');
      assert.equal((await boardTickets(bar)).length, orders.length);
    }));

  test('sound: a chime for a new ticket, none while muted; mute is remembered', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Sound Bistro' });
      const context = await scene.context(RUSH_SCREEN);
      await countOscillators(context);
      const kitchen = await openKitchenAt(scene, shop, { context, name: 'kitchen-sound' });
      const table = await server.openTable(shop.shopId, 'S1');
      const before = await chimes(kitchen);
      assert.equal(before.pressed, 'false');
      assert.notEqual(before.audio, 'unavailable');
      await audioRunning(kitchen);

      const first = await staffOrder(server, table, [{ menuItemId: shop.items.beer, quantity: 1 }]);
      await ticket(kitchen, first.orderId).waitFor();
      await eventually(async () => (await chimes(kitchen)).played === before.played + 1, { what: 'one chime' });
      assert.ok((await oscillators(kitchen)) >= 2, 'the chime played its notes');

      await kitchen.locator('#sound-toggle').click();
      assert.equal(await kitchen.locator('#sound-toggle').getAttribute('aria-pressed'), 'true');
      await kitchen.waitForTimeout(800); // past the chime's coalescing window
      const notes = await oscillators(kitchen);
      const second = await staffOrder(server, table, [{ menuItemId: shop.items.lemonade, quantity: 1 }]);
      await ticket(kitchen, second.orderId).waitFor();
      await eventually(async () => (await chimes(kitchen)).muted === before.muted + 1, {
        what: 'a muted chime counted',
      });
      assert.equal((await chimes(kitchen)).played, before.played + 1, 'no chime while muted');
      assert.equal(await oscillators(kitchen), notes, 'no sound while muted');

      await kitchen.reload();
      await kitchen.locator('#connection[data-state="live"]').waitFor();
      assert.equal(await kitchen.locator('#sound-toggle').getAttribute('aria-pressed'), 'true', 'mute is remembered');
      await kitchen.locator('#sound-toggle').click();
      assert.equal(await kitchen.locator('#sound-toggle').getAttribute('aria-pressed'), 'false');
    }));

  test('age colours: amber after 5 min and red after 10, then the shop’s thresholds, followed live', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Clock Bistro' });
      const { orders } = await placeRush(server, shop, { count: 2, tables: 2 });
      const kitchen = await openKitchenAt(scene, shop, { name: 'kitchen-clock', clock: true });
      const card = ticket(kitchen, orders[0].orderId);
      await card.waitFor();
      assert.equal(await card.getAttribute('data-age-level'), 'fresh');
      assert.match(await kitchen.locator('#age-legend').textContent(), /Amber 5 min · red 10 min/);

      await fastForward(kitchen, 5 * 60_000 + 10_000);
      await kitchen.locator(`#board li.ticket[data-order-id="${orders[0].orderId}"][data-age-level="warn"]`).waitFor();
      assert.equal(await card.locator('time.ticket-age').getAttribute('data-age-level'), 'warn');
      await fastForward(kitchen, 5 * 60_000);
      await kitchen.locator(`#board li.ticket[data-order-id="${orders[0].orderId}"][data-age-level="late"]`).waitFor();
      assert.match(await card.locator('time.ticket-age').textContent(), /^Late · 10 min$/);

      // The thresholds are the shop's (staff set them in the console): the
      // open display follows the PATCH's menu.changed without a reload.
      await server.call('PATCH', `/api/v1/shops/${shop.shopId}`, {
        body: { kitchenWarnMinutes: 20, kitchenLateMinutes: 30 },
      });
      await kitchen.locator(`#board li.ticket[data-order-id="${orders[0].orderId}"][data-age-level="fresh"]`).waitFor();
      await kitchen.locator('#age-legend', { hasText: 'Amber 20 min · red 30 min' }).waitFor();
      await server.call('PATCH', `/api/v1/shops/${shop.shopId}`, {
        body: { kitchenWarnMinutes: 8, kitchenLateMinutes: 12 },
      });
      await kitchen.locator(`#board li.ticket[data-order-id="${orders[0].orderId}"][data-age-level="warn"]`).waitFor();

      // The settings dialog shows them, read only: the screen keeps its layout only.
      await kitchen.locator('#settings-open').click();
      await kitchen.locator('#settings-dialog[open]').waitFor();
      assert.equal(await kitchen.locator('#settings-thresholds').textContent(), 'Amber after 8 min, red after 12 min.');
      assert.match(await kitchen.locator('#settings-dialog').textContent(), /staff console/);
      assert.equal(await kitchen.locator('#settings-dialog input[type="number"]').count(), 0, 'no threshold to set here');
      await kitchen.locator('#settings-cancel').click();

      await kitchen.reload();
      await kitchen.locator('#connection[data-state="live"]').waitFor();
      await kitchen.locator('#age-legend', { hasText: 'Amber 8 min · red 12 min' }).waitFor();
      await kitchen.locator(`#board li.ticket[data-order-id="${orders[0].orderId}"][data-age-level="warn"]`).waitFor();
    }));

  test('recently done survives a reload; Enter bumps and R recalls', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Recall Bistro' });
      const { orders } = await placeRush(server, shop, { count: 4, tables: 4 });
      const context = await scene.context(RUSH_SCREEN);
      const kitchen = await openKitchenAt(scene, shop, { name: 'kitchen-recall', context });
      await ticket(kitchen, orders[3].orderId).waitFor();

      // Bumped here to ready (buttons), and served elsewhere (the API).
      const first = ticket(kitchen, orders[0].orderId);
      for (const status of ['accepted', 'preparing', 'ready']) {
        await first.locator(`button[data-action="advance"][data-next-status="${status}"]`).click();
        await ticket(kitchen, orders[0].orderId, status).waitFor();
      }
      await server.setStatus(orders[1].orderId, 'served');
      const recentEntry = (order, status) =>
        kitchen.locator(`#recent-list li[data-recent-order-id="${order.orderId}"][data-status="${status}"]`);
      const recentReady = recentEntry(orders[0], 'ready');
      const recentServed = recentEntry(orders[1], 'served');
      await recentReady.waitFor();
      await recentServed.waitFor();
      const recallTo = (entry) => entry.locator('button[data-action="recall"]').getAttribute('data-recall-to');
      // Where each was bumped from, as this screen saw it: served straight
      // from placed comes back to placed.
      assert.equal(await recallTo(recentReady), 'preparing');
      assert.equal(await recallTo(recentServed), 'placed');

      await kitchen.reload();
      await kitchen.locator('#connection[data-state="live"]').waitFor();
      await recentReady.waitFor();
      await recentServed.waitFor();
      assert.match(await recentServed.textContent(), new RegExp(`#${orders[1].ticketNumber}.*Table T2.*Served`));
      assert.deepEqual(
        await kitchen
          .locator('#recent-list li[data-recent-order-id]')
          .evaluateAll((els) => els.map((li) => li.dataset.recentOrderId)),
        [orders[1].orderId, orders[0].orderId],
        'newest first',
      );

      // Recall. Enter bumps the selected ticket; R recalls the last bump.
      await kitchen.keyboard.press('1'); // the oldest still cooking: orders[2]
      await kitchen.locator(`#board li.ticket[data-selected="true"][data-order-id="${orders[2].orderId}"]`).waitFor();
      await kitchen.keyboard.press('Enter');
      await ticket(kitchen, orders[2].orderId, 'accepted').waitFor();
      assert.equal((await server.call('GET', `/api/v1/orders/${orders[2].orderId}`)).status, 'accepted');
      await kitchen.keyboard.press('r');

      await ticket(kitchen, orders[2].orderId, 'placed').waitFor();
      const undone = await server.call('GET', `/api/v1/orders/${orders[2].orderId}`);
      assert.equal(undone.status, 'placed', 'R undid the bump');

      // From the list: the served ticket back to placed, the ready one to preparing.
      await recentServed.locator('button[data-action="recall"]').click();
      await ticket(kitchen, orders[1].orderId, 'placed').waitFor();
      assert.equal((await server.call('GET', `/api/v1/orders/${orders[1].orderId}`)).status, 'placed');
      await recentServed.waitFor({ state: 'detached' });
      await recentReady.locator('button[data-action="recall"]').click();
      await ticket(kitchen, orders[0].orderId, 'preparing').waitFor();
      assert.equal((await server.call('GET', `/api/v1/orders/${orders[0].orderId}`)).status, 'preparing');
    }));
});
