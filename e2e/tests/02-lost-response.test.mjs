// The network drops after the order was sent: the server committed it, but
// the page sees a network error instead of the answer. The page retries with
// the same Idempotency-Key, gets the original answer replayed, and shows the
// order once; the kitchen shows it once; the API has one order.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  addToCart,
  guestOrders,
  kitchenTickets,
  recordStatusStates,
  statusStates,
  ticket,
} from '../lib/pages.mjs';
import { Scene, WAIT_MS } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

describe('a response lost on the way back', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('the page retries with the same key and shows the order once; so does the kitchen', (t) =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T2');
      const kitchen = await scene.openKitchen();
      const guest = await scene.openGuest(table);
      await recordStatusStates(guest);

      // Every order POST goes to the server. The first one's answer is
      // thrown away and the page gets a network error instead; later ones
      // get their answers.
      const ordersPath = `/api/v1/sessions/${table.sessionId}/orders`;
      const sent = [];
      const isOrders = (url) => url.pathname === ordersPath;
      await guest.route(
        isOrders,
        async (route) => {
          const request = route.request();
          if (request.method() !== 'POST') return route.continue();
          const response = await route.fetch({ timeout: WAIT_MS });
          sent.push({
            key: request.headers()['idempotency-key'],
            status: response.status(),
            replayed: response.headers()['idempotent-replayed'] === 'true',
            body: await response.json(),
          });
          if (sent.length === 1) await route.abort('internetdisconnected');
          else await route.fulfill({ response });
        },
      );

      await addToCart(guest, shop.items.pie);
      await addToCart(guest, shop.items.pie);
      await addToCart(guest, shop.items.fries);
      await guest.locator('#confirm').click();

      const status = guest.locator('#status[data-state="success"]');
      await status.waitFor({ timeout: 30_000 });
      await guest.unroute(isOrders);

      // The first attempt was committed; its answer never reached the page.
      assert.ok(sent.length >= 2, `the page sent the order again (attempts: ${sent.length})`);
      const [first, ...retries] = sent;
      assert.equal(first.status, 201, 'the first attempt placed the order');
      assert.equal(first.replayed, false);
      const order = first.body;
      for (const retry of retries) {
        assert.equal(retry.key, first.key, 'every retry carries the same Idempotency-Key');
      }
      const last = retries[retries.length - 1];
      assert.equal(last.status, 201);
      assert.equal(last.replayed, true, 'the retry got the original answer, replayed');
      assert.equal(last.body.orderId, order.orderId);

      // The guest sees the order once, and no error on the way.
      assert.equal(await status.getAttribute('data-ticket'), String(order.ticketNumber));
      assert.equal(await status.textContent(), `Order placed — ticket ${order.ticketNumber}`);
      const states = await statusStates(guest);
      const attempts = sent.map((a) => `${a.status}${a.replayed ? ' (replayed)' : ''}`).join(', ');
      t.diagnostic(`attempts: ${attempts}; status: ${states.join(' → ')}`);
      assert.ok(!states.includes('error'), `no error was shown (states: ${states.join(' → ')})`);
      assert.ok(states.includes('retrying'), `"still sending" was shown (states: ${states.join(' → ')})`);
      await guest.locator('#cart-empty').waitFor();

      // The server: one order, stock taken once, and the audit has the
      // accepted request and its replay.
      const orders = await server.sessionOrders(table);
      assert.deepEqual(
        orders.map((o) => o.orderId),
        [order.orderId],
        'one order in the table history',
      );
      const menu = await server.call('GET', `/api/v1/shops/${shop.shopId}/menu`, { auth: null });
      assert.equal(menu.items.find((i) => i.menuItemId === shop.items.pie).stock, 6, 'two pies taken, once');
      const audit = await eventually(
        async () => {
          const rows = (await server.audit(shop.shopId)).filter((e) => e.sessionId === table.sessionId);
          return rows.some((e) => e.code === 'REPLAYED') && rows;
        },
        { what: 'the REPLAYED audit row' },
      );
      assert.deepEqual(
        audit.map((e) => [e.code, e.orderId]).sort(),
        [['ACCEPTED', order.orderId], ...retries.map(() => ['REPLAYED', order.orderId])].sort(),
        'the accepted request and its replays',
      );

      // The kitchen shows one ticket (an API status change is the barrier
      // after which a doubled ticket would have shown).
      await ticket(kitchen, order.orderId).waitFor();
      await server.setStatus(order.orderId, 'accepted');
      await ticket(kitchen, order.orderId, 'accepted').waitFor();
      assert.deepEqual(await kitchenTickets(kitchen), [
        { orderId: order.orderId, status: 'accepted', ticket: order.ticketNumber, table: 'T2' },
      ]);
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="accepted"]`).waitFor();
      assert.deepEqual(
        (await guestOrders(guest)).map((o) => o.orderId),
        [order.orderId],
        'the guest page lists the order once',
      );

      await scene.screenshot(guest, 'lost-response-guest', { fullPage: true });
      await scene.screenshot(kitchen, 'lost-response-kitchen');
    }));
});
