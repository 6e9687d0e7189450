// The kitchen moves a ticket along with its buttons (accept, start
// preparing, mark ready): the guest page shows each status as it happens,
// and "Ready" at the end.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { addToCart, guestOrders, ticket } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';

describe('the kitchen advances a ticket', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('the guest page shows "Ready" when the kitchen marks the ticket ready', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T4');
      const kitchen = await scene.openKitchen();
      const guest = await scene.openGuest(table);

      await addToCart(guest, shop.items.burger, { toppings: [shop.toppings.cheese, shop.toppings.bacon] });
      await guest.locator('#note').fill('no pickles');
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const [order] = await server.sessionOrders(table);
      const guestRow = guest.locator(`#orders > li[data-order-id="${order.orderId}"]`);
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="placed"]`).waitFor();
      assert.equal((await guestRow.locator('[data-role="status"]').textContent()).trim(), 'Sent to the kitchen');

      // The ticket as the kitchen sees it.
      const card = ticket(kitchen, order.orderId);
      await ticket(kitchen, order.orderId, 'placed').waitFor();
      assert.equal(await card.getAttribute('data-table'), 'T4');
      assert.equal(await card.getAttribute('data-ticket-number'), String(order.ticketNumber));
      assert.equal((await card.locator('.line-name').textContent()).trim(), 'Cheeseburger');
      assert.deepEqual(
        (await card.locator('li[data-topping]').allTextContents()).map((t) => t.trim()).sort(),
        ['+ Bacon', '+ Extra cheese'],
      );
      assert.match(await card.locator('.ticket-note').textContent(), /no pickles/);
      await kitchen.locator(`ol[data-list="placed"] li.ticket[data-order-id="${order.orderId}"]`).waitFor();

      // Accept, start preparing, mark ready: one press each, in the kitchen.
      const steps = [
        ['accepted', 'Accepted'],
        ['preparing', 'Being prepared'],
        ['ready', 'Ready'],
      ];
      for (const [status, guestLabel] of steps) {
        const advance = card.locator('button[data-action="advance"]');
        assert.equal(await advance.getAttribute('data-next-status'), status);
        await advance.click();
        await kitchen.locator(`ol[data-list="${status}"] li.ticket[data-order-id="${order.orderId}"]`).waitFor();
        await guest
          .locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="${status}"]`)
          .waitFor();
        assert.equal((await guestRow.locator('[data-role="status"]').textContent()).trim(), guestLabel);
      }

      // Ready on the guest page, the board and the server.
      assert.deepEqual(await guestOrders(guest), [
        { orderId: order.orderId, status: 'ready', ticket: order.ticketNumber, label: 'Ready' },
      ]);
      assert.equal(await kitchen.locator('[data-count="ready"]').textContent(), '1');
      const [now] = await server.sessionOrders(table);
      assert.equal(now.status, 'ready');
      assert.equal(now.version, order.version + 3, 'three changes, each made once');

      await scene.screenshot(guest, 'ready-guest', { fullPage: true });
      await scene.screenshot(kitchen, 'ready-kitchen');
    }));

  test('a line note shows on its line of the ticket', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T5');
      const kitchen = await scene.openKitchen();
      const order = await server.call('POST', `/api/v1/sessions/${table.sessionId}/staff-orders`, {
        expect: 201,
        body: {
          items: [
            { menuItemId: shop.items.fries, quantity: 1, note: 'extra crispy' },
            { menuItemId: shop.items.cola, quantity: 1 },
          ],
        },
      });
      const card = ticket(kitchen, order.orderId, 'placed');
      await card.waitFor();
      const lines = card.locator('li[data-line]');
      assert.equal((await lines.nth(0).locator('.line-note').textContent()).trim(), 'extra crispy');
      assert.equal(await lines.nth(1).locator('.line-note').count(), 0);
    }));
});
