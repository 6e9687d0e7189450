// A guest taps "Place order" five times fast on a slow connection: exactly
// one ticket reaches the kitchen display, the guest sees one order, and the
// API has one order for the table.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  addToCart,
  guestOrders,
  kitchenTickets,
  recordStatusStates,
  statusStates,
  throttle,
  ticket,
} from '../lib/pages.mjs';
import { PHONE, Scene } from '../lib/scene.mjs';

describe('double taps on a throttled connection', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('five fast taps on "Place order" make exactly one order and one kitchen ticket', (t) =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T1');
      const kitchen = await scene.openKitchen();
      const phone = await scene.context(PHONE);
      const guest = await scene.openGuest(table, { context: phone });

      const ordersPath = `/api/v1/sessions/${table.sessionId}/orders`;
      const posts = [];
      guest.on('request', (req) => {
        if (req.method() === 'POST' && new URL(req.url()).pathname === ordersPath) {
          posts.push(req.headers()['idempotency-key']);
        }
      });
      await recordStatusStates(guest);

      await addToCart(guest, shop.items.burger, { toppings: [shop.toppings.bacon] });
      await addToCart(guest, shop.items.cola);

      // A slow restaurant Wi-Fi: 2.5 s before any answer, 8 KB/s each way.
      const slow = await throttle(phone, guest, { latencyMs: 2500, bytesPerSecond: 8 * 1024 });
      const confirm = guest.locator('#confirm');
      const started = Date.now();
      for (let i = 0; i < 5; i++) await confirm.tap();
      const tapsMs = Date.now() - started;
      // Every tap landed while the first one was still on its way.
      assert.equal(await confirm.getAttribute('aria-busy'), 'true', `the five taps took ${tapsMs} ms`);

      const status = guest.locator('#status[data-state="success"]');
      await status.waitFor({ timeout: 30_000 });
      const placedMs = Date.now() - started;
      t.diagnostic(`5 taps in ${tapsMs} ms; placed after ${placedMs} ms; order POSTs sent: ${posts.length}`);
      await slow.off();
      const ticketNumber = Number(await status.getAttribute('data-ticket'));
      assert.match(await status.textContent(), new RegExp(`^Order placed — ticket ${ticketNumber}$`));
      assert.ok(!(await statusStates(guest)).includes('error'), 'no error was shown while sending');
      assert.equal(posts.length, 1, `re-taps join the request in flight (POSTs sent: ${posts.length})`);
      await guest.locator('#cart-empty').waitFor();

      // The server has exactly one order for the table, the cart as sent.
      const orders = await server.sessionOrders(table);
      assert.equal(orders.length, 1, 'one order in the table history');
      const [order] = orders;
      assert.equal(order.ticketNumber, ticketNumber);
      assert.deepEqual(
        order.items.map((l) => [l.menuItemId, l.quantity, l.toppings.map((t) => t.toppingId)]).sort(),
        [
          [shop.items.burger, 1, [shop.toppings.bacon]],
          [shop.items.cola, 1, []],
        ].sort(),
      );
      const accepted = (await server.audit(shop.shopId)).filter((e) => e.sessionId === table.sessionId);
      assert.deepEqual(
        accepted.map((e) => [e.code, e.orderId]),
        [['ACCEPTED', order.orderId]],
        'one audited request, accepted',
      );

      // The kitchen shows its ticket. Then a status change made through the
      // API acts as a barrier: once the board shows it, every earlier event
      // has been handled, so a doubled ticket would be on the board by now.
      await ticket(kitchen, order.orderId).waitFor();
      await server.setStatus(order.orderId, 'accepted');
      await ticket(kitchen, order.orderId, 'accepted').waitFor();
      assert.deepEqual(await kitchenTickets(kitchen), [
        { orderId: order.orderId, status: 'accepted', ticket: ticketNumber, table: 'T1' },
      ]);

      // The guest page likewise: one order, now accepted.
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="accepted"]`).waitFor();
      assert.deepEqual(await guestOrders(guest), [
        { orderId: order.orderId, status: 'accepted', ticket: ticketNumber, label: 'Accepted' },
      ]);
      assert.equal((await server.sessionOrders(table)).length, 1, 'still one order');

      await scene.screenshot(guest, 'double-tap-guest', { fullPage: true });
      await scene.screenshot(kitchen, 'double-tap-kitchen');
    }));
});
