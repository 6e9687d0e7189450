// Staff mark an item sold out (86) in the staff console: the guest page that
// is already open greys it out at once, without a reload, and it cannot be
// ordered: its Add button is disabled, a cart that holds it cannot be sent,
// and the API refuses it (an 86 counts as 0 available, even untracked).
// Turning the 86 off brings it back the same way.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { addToCart } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';

describe('sold out (86) from the staff console', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('the open guest page greys the item out live and it cannot be ordered', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const fries = shop.items.fries; // untracked: only the 86 makes it unavailable
      const table = await server.openTable(shop.shopId, 'T3');
      const staff = await scene.openStaff();
      const guest = await scene.openGuest(table);

      // The page must not reload: a marker in its window has to survive,
      // and its main frame must not navigate.
      await guest.evaluate(() => {
        window.__e2eMarker = 'same page';
      });
      let navigations = 0;
      guest.on('framenavigated', (frame) => {
        if (frame === guest.mainFrame()) navigations += 1;
      });

      const item = guest.locator(`#menu-items .item[data-item-id="${fries}"]`);
      const add = guest.locator(`button[data-action="add"][data-item-id="${fries}"]`);
      const available = guest.locator(`#menu-items .item[data-item-id="${shop.items.rings}"]`);
      assert.equal(await item.getAttribute('data-sold-out'), 'false');
      const look = (loc) =>
        loc.evaluate((el) => ({
          background: getComputedStyle(el).backgroundColor,
          color: getComputedStyle(el).color,
          name: getComputedStyle(el.querySelector('.item-name')).textDecorationLine,
        }));
      const normal = await look(item);

      // The guest already has fries in the cart (and a cola).
      await addToCart(guest, fries);
      await addToCart(guest, shop.items.cola);
      const friesLine = guest.locator(`#cart-lines > li[data-item-id="${fries}"]`);
      assert.equal(await guest.locator('#confirm').isEnabled(), true);

      // Staff: 86 the fries with the row's toggle.
      const row = staff.locator(`#inventory-list tr[data-item-id="${fries}"]`);
      const toggle = row.locator('button[data-action="toggle-sold-out"]');
      assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
      await toggle.click();
      await staff.locator(`#inventory-list tr[data-item-id="${fries}"][data-sold-out="true"]`).waitFor();
      assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
      const entry = (await server.call('GET', `/api/v1/shops/${shop.shopId}/inventory`)).entries.find(
        (e) => e.itemId === fries,
      );
      assert.equal(entry.soldOut, true, 'the inventory says sold out');
      assert.equal(entry.stock, null, 'and the item is still untracked');

      // Guest: greyed out, live.
      await guest.locator(`#menu-items .item[data-item-id="${fries}"][data-sold-out="true"]`).waitFor();
      assert.equal(await add.isDisabled(), true, 'its Add button is disabled');
      assert.equal((await add.textContent()).trim(), 'Sold out');
      assert.equal(await item.locator('[data-role="stock"]').textContent(), 'Sold out');
      const greyed = await look(item);
      assert.notEqual(greyed.background, normal.background, 'greyed out: its background changed');
      assert.notEqual(greyed.color, normal.color, 'greyed out: its text colour changed');
      assert.equal(greyed.name, 'line-through', 'its name is struck through');
      assert.deepEqual(await look(available), normal, 'other items look as before');
      assert.equal(await guest.evaluate(() => window.__e2eMarker), 'same page', 'the page was not reloaded');
      assert.equal(navigations, 0, 'the page did not navigate');

      // Ordering it is impossible: a press on the disabled button does
      // nothing, and the cart that holds it cannot be sent.
      await add.click({ force: true });
      assert.equal(await friesLine.getAttribute('data-quantity'), '1', 'the press added nothing');
      await friesLine.locator('[data-role="warning"]').waitFor();
      assert.equal(await guest.locator('#cart-problem').isVisible(), true);
      assert.equal(await guest.locator('#confirm').isDisabled(), true, '"Place order" is disabled');
      await scene.screenshot(guest, 'sold-out-guest', { fullPage: true });
      await scene.screenshot(staff, 'sold-out-staff', { fullPage: true });

      // And the API refuses it: an 86 is 0 available, even untracked.
      const direct = await server.guestOrder(table, [{ menuItemId: fries, quantity: 1 }]);
      assert.equal(direct.status, 409);
      assert.equal(direct.body.code, 'OUT_OF_STOCK');
      assert.deepEqual(direct.body.shortages, [{ itemId: fries, requested: 1, available: 0 }]);
      assert.deepEqual(await server.sessionOrders(table), [], 'nothing was ordered');

      // Staff turn the 86 off: the item comes back the same way.
      await toggle.click();
      await staff.locator(`#inventory-list tr[data-item-id="${fries}"][data-sold-out="false"]`).waitFor();
      await guest.locator(`#menu-items .item[data-item-id="${fries}"][data-sold-out="false"]`).waitFor();
      assert.equal(await add.isEnabled(), true);
      assert.equal((await add.textContent()).trim(), 'Add');
      assert.deepEqual(await look(item), normal);
      await friesLine.locator('[data-role="warning"]').waitFor({ state: 'detached' });
      assert.equal(await guest.locator('#confirm').isEnabled(), true);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const orders = await server.sessionOrders(table);
      assert.equal(orders.length, 1);
      assert.deepEqual(orders[0].items.map((l) => l.menuItemId).sort(), [fries, shop.items.cola].sort());
      assert.equal(await guest.evaluate(() => window.__e2eMarker), 'same page', 'still the same page');
      assert.equal(navigations, 0);
    }));
});
