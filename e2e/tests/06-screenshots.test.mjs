// Screenshots for a reviewer: the guest page (a phone), the kitchen display
// and the staff console during a small lunch service, saved as
// e2e/screenshots/guest.png, kitchen.png and staff.png. (The other tests
// save shots of their own moments there too.)

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import { addToCart, pngSize, ticket } from '../lib/pages.mjs';
import { PHONE, SCREEN, Scene } from '../lib/scene.mjs';

describe('screenshots of the three pages', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('saves the guest page, the kitchen display and the staff console', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const { items, toppings } = shop;

      // A lunch service: four tables, orders at every stage, an 86 and a
      // dessert running low.
      const tables = {};
      for (const label of ['T1', 'T2', 'T3', 'T4']) tables[label] = await server.openTable(shop.shopId, label);
      const place = async (label, lines, note) => {
        const res = await server.guestOrder(tables[label], lines, { note });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body;
      };
      const t1 = await place('T1', [
        { menuItemId: items.burger, quantity: 2, toppingIds: [toppings.bacon] },
        { menuItemId: items.fries, quantity: 2 },
      ]);
      const t2 = await place('T2', [{ menuItemId: items.pie, quantity: 2 }, { menuItemId: items.cola, quantity: 2 }]);
      const t3 = await place(
        'T3',
        [{ menuItemId: items.burger, quantity: 1, toppingIds: [toppings.cheese] }],
        'well done',
      );
      const t4 = await place('T4', [{ menuItemId: items.rings, quantity: 1 }, { menuItemId: items.cola, quantity: 1 }]);
      await server.setStatus(t1.orderId, 'accepted');
      await server.setStatus(t1.orderId, 'preparing');
      await server.setStatus(t2.orderId, 'ready');
      await server.setStatus(t4.orderId, 'accepted');
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${items.rings}`, { body: { soldOut: true } });
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${items.pie}`, { body: { stock: 3 } });

      // The kitchen display.
      const kitchen = await scene.openKitchen();
      for (const [order, status] of [
        [t1, 'preparing'],
        [t2, 'ready'],
        [t3, 'placed'],
        [t4, 'accepted'],
      ]) {
        await ticket(kitchen, order.orderId, status).waitFor();
      }
      const kitchenShot = await scene.screenshot(kitchen, 'kitchen');

      // The staff console, with a table just opened (PIN and QR code).
      const staff = await scene.openStaff();
      await staff.locator('#table-label').fill('T5');
      await staff.locator('#open-table-form button[type=submit]').click();
      await staff.locator('#table-card[data-session-id] #table-qr svg').waitFor();
      await staff.locator('#active-list tr[data-table-label="T5"]').waitFor();
      await staff.locator(`#inventory-list tr[data-item-id="${items.rings}"][data-sold-out="true"]`).waitFor();
      await staff.locator('#audit-list tr[data-code="ACCEPTED"]').nth(3).waitFor();
      const staffShot = await scene.screenshot(staff, 'staff', { fullPage: true });

      // The guest page of T1: its order being prepared, a new dish in the
      // cart, onion rings sold out and the pie running low.
      const guest = await scene.openGuest(tables.T1, { context: await scene.context(PHONE) });
      await guest.locator(`#orders > li[data-order-id="${t1.orderId}"][data-order-status="preparing"]`).waitFor();
      await guest.locator(`#menu-items .item[data-item-id="${items.rings}"][data-sold-out="true"]`).waitFor();
      await addToCart(guest, items.pie);
      const guestShot = await scene.screenshot(guest, 'guest', { fullPage: true });
      const guestTop = await scene.screenshot(guest, 'guest-top');

      for (const [path, minWidth] of [
        [kitchenShot, SCREEN.viewport.width],
        [staffShot, SCREEN.viewport.width],
        [guestShot, PHONE.viewport.width * PHONE.deviceScaleFactor],
        [guestTop, PHONE.viewport.width * PHONE.deviceScaleFactor],
      ]) {
        const { width, height } = pngSize(await readFile(path));
        assert.ok(width >= minWidth && height > 0, `${path} is a ${width}×${height} PNG`);
      }
    }));
});
