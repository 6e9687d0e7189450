// Staff accounts, roles and devices in the pages (issue 18):
//   - the start page (/) shows nothing before signing in; an owner signs in
//     there with a username and password, sees her shop and opens its
//     console already signed in; in the console she makes
//     a kitchen display under "Staff & devices" and gets its sign-in link
//     and QR code once;
//   - the kitchen display opens that link: it is signed in as the device
//     (the token leaves the URL and stays on the device across a reload)
//     and a staff order's ticket appears on it;
//   - the owner revokes the device: the display says it was signed out;
//   - a floor account sees the tables but no menu editor, staff, inventory
//     or printers, and opening #menu says its role cannot;
//   - the administrator creates a shop from the start page.
//     Saves console-staff-devices.png.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { staffOrder } from '../lib/kitchen-rush.mjs';
import { SCREEN, Scene, WAIT_MS } from '../lib/scene.mjs';

const PASSWORD = 'correct horse battery staple';

async function signInAs(page, username) {
  await page.locator('#username-input').fill(username);
  await page.locator('#password-input').fill(PASSWORD);
  await page.locator('#login-form button[type=submit]').click();
  await page.locator('#app').waitFor({ state: 'visible' });
  await page.locator('#connection[data-state="live"]').waitFor();
}

describe('staff accounts, roles and devices in the pages', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('an owner makes a kitchen display, it signs in by its link and is signed out when revoked; a floor account cannot open the menu editor', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const staffPath = `/api/v1/shops/${shop.shopId}/staff`;
      for (const [username, role] of [
        ['hana', 'owner'],
        ['ren', 'floor'],
      ]) {
        await server.call('POST', staffPath, { expect: 201, body: { username, password: PASSWORD, role } });
      }

      // The owner signs in with a password and sees every section.
      // Tall enough for the whole "Staff & devices" section in its screenshot.
      const tall = { ...SCREEN, viewport: { width: 1280, height: 1500 } };
      const console_ = await scene.page(await scene.context(tall), 'owner');
      // The start page shows nothing before signing in.
      await console_.goto(server.url('/'));
      await console_.locator('#login-form').waitFor();
      assert.equal(await console_.locator('#app').isHidden(), true);
      await console_.locator('#username-input').fill('hana');
      await console_.locator('#password-input').fill('not the password');
      await console_.locator('#login-form button[type=submit]').click();
      await console_.locator('#login-error:not([hidden])').waitFor();
      assert.equal(await console_.locator('#app').isHidden(), true, 'a wrong password opens nothing');
      await console_.locator('#username-input').fill('');
      await console_.locator('#username-input').fill('hana');
      await console_.locator('#password-input').fill(PASSWORD);
      await console_.locator('#login-form button[type=submit]').click();
      // Her shop, as its owner; its console opens signed in.
      const mine = console_.locator(`#shop-list li[data-shop-id="${shop.shopId}"]`);
      await mine.waitFor();
      assert.equal(await mine.locator('[data-role=role]').textContent(), 'owner');
      assert.equal(await console_.locator('#new-shop').isHidden(), true, 'only the administrator creates shops');
      await mine.locator('a[data-action=staff]').click();
      await console_.locator('#app').waitFor({ state: 'visible' });
      await console_.locator('#connection[data-state="live"]').waitFor();
      assert.equal(await console_.locator('#signed-in-as').textContent(), 'hana · owner');
      for (const section of ['menu', 'team', 'inventory', 'printers']) {
        assert.equal(await console_.locator(`.topbar-nav a[href="#${section}"]`).isVisible(), true, section);
      }

      // A kitchen display, shown once as a link and its QR code.
      await console_.locator('a[href="#team"]').click();
      await console_.locator('#member-list tr[data-username="ren"]').waitFor();
      await console_.locator('#device-name').fill('Pass display');
      await console_.locator('#device-role').selectOption('kitchen');
      await console_.locator('#device-form button[type=submit]').click();
      const card = console_.locator('#device-token-card');
      await card.waitFor();
      const link = await console_.locator('#device-link').inputValue();
      assert.match(link, new RegExp(`/kitchen/${shop.shopId}#device=og_device_[0-9a-f]{64}$`));
      assert.equal(await console_.locator('#device-qr').getAttribute('data-link'), link);
      await console_.locator('#device-qr svg[role=img]').waitFor();
      const row = console_.locator('#device-list tr[data-device-name="Pass display"]');
      await row.waitFor();
      assert.equal(await row.getAttribute('data-role'), 'kitchen');
      await scene.screenshot(console_, 'console-staff-devices');

      // The display opens the link: signed in as the device, the token out of the URL.
      const display = await scene.page(await scene.context(SCREEN), 'display');
      await display.goto(link);
      await display.locator('#app').waitFor({ state: 'visible' });
      await display.locator('#connection[data-state="live"]').waitFor();
      assert.equal(await display.locator('#signed-in-as').textContent(), 'Pass display · kitchen');
      assert.equal(new URL(display.url()).hash, '', 'the token left the address bar');
      const session = await server.openTable(shop.shopId, 'T1');
      const order = await staffOrder(server, session, [{ menuItemId: shop.items.burger, quantity: 1 }]);
      await display.locator(`li.ticket[data-order-id="${order.orderId}"]`).waitFor();
      // Switched off and on: still signed in.
      await display.reload();
      await display.locator(`li.ticket[data-order-id="${order.orderId}"]`).waitFor();
      assert.equal(await display.locator('#signed-in-as').textContent(), 'Pass display · kitchen');

      // Revoked from the console: the display says it was signed out.
      await console_.locator('#device-token-done').click();
      console_.once('dialog', (dialog) => dialog.accept());
      await row.locator('button[data-action=revoke]').click();
      await row.waitFor({ state: 'detached' });
      const message = display.locator('#sign-in-message');
      await message.waitFor({ state: 'visible', timeout: WAIT_MS });
      assert.match(await message.textContent(), /This device was signed out/);
      assert.equal(await display.locator('#app').isHidden(), true);
      assert.equal(await display.evaluate(() => localStorage.getItem('ordergate.deviceToken')), null);

      // A floor account: the tables, not the menu editor, staff, inventory or printers.
      const floor = await scene.page(await scene.context(SCREEN), 'floor');
      await floor.goto(server.url(`/staff/${shop.shopId}`));
      await signInAs(floor, 'ren');
      assert.equal(await floor.locator('#signed-in-as').textContent(), 'ren · floor');
      await floor.locator('#tables').waitFor();
      for (const section of ['menu', 'team', 'inventory', 'printers', 'audit', 'kitchen']) {
        assert.equal(await floor.locator(`.topbar-nav a[href="#${section}"]`).isHidden(), true, `no ${section} link`);
        if (section !== 'menu') assert.equal(await floor.locator(`#${section}`).isHidden(), true, `no ${section}`);
      }
      await floor.goto(server.url(`/staff/${shop.shopId}#menu`));
      await floor.locator('#app').waitFor({ state: 'visible' });
      const refused = floor.locator('#not-allowed');
      await refused.waitFor();
      assert.match(await floor.locator('#not-allowed-text').textContent(), /floor account cannot open the menu editor/);
      assert.equal(await floor.locator('#menu').isHidden(), true, 'the editor stays closed');
      assert.equal(await floor.locator('#problem').textContent(), '', 'and nothing it may not read was asked for');

      // The administrator sets up a restaurant from the start page.
      const admin = await scene.page(await scene.context(SCREEN), 'admin');
      await admin.goto(server.url('/'));
      await admin.locator('#token-input').fill(server.token);
      await admin.locator('#token-form button[type=submit]').click();
      await admin.locator('#new-shop').waitFor();
      await admin.locator('#shop-name-input').fill('Sakura Izakaya');
      await admin.locator('#shop-timezone').fill('Asia/Tokyo');
      await admin.locator('#shop-form button[type=submit]').click();
      const created = admin.locator('#shop-list li', { hasText: 'Sakura Izakaya' });
      await created.waitFor();
      assert.equal(await created.locator('[data-role=role]').textContent(), 'administrator');
      const { shops } = await server.call('GET', '/api/v1/shops');
      assert.ok(shops.some((s) => s.name === 'Sakura Izakaya' && s.currency === 'JPY' && s.timezone === 'Asia/Tokyo'));
    }));
});
