// Wrong PINs lock a table: a guest arriving with the right PIN is refused.
// The staff console, already open, shows the table locked (and until when)
// with an Unlock button; pressing it lifts the lock, and the guest gets in
// with the PIN ("Try again" on the page) and orders.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { addToCart } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';

// The console reads the tables again every 15 s (a lock makes no event).
const CONSOLE_POLL_MS = 15_000;

describe('staff unlock a locked table', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('the console shows the lock, and Unlock lets the guest in with the PIN', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T7');
      const staff = await scene.openStaff();
      const row = staff.locator(`#active-list tr[data-session-id="${table.sessionId}"]`);
      await row.waitFor();
      assert.equal(await row.getAttribute('data-pin-locked'), 'false');
      assert.equal(await row.locator('[data-action="unlock"]').count(), 0, 'no Unlock button while unlocked');

      // Five wrong PINs (the table's limit) lock it.
      for (let i = 0; i < 5; i++) {
        const res = await server.guessPin(table);
        assert.equal(res.status, 401);
      }
      const { sessions } = await server.call('GET', `/api/v1/shops/${shop.shopId}/sessions?status=active`);
      const lockedUntil = sessions.find((s) => s.sessionId === table.sessionId).pinLockedUntil;
      assert.ok(Date.parse(lockedUntil) > Date.now(), `locked until ${lockedUntil}`);

      // The guest, with the right PIN, is refused.
      const guest = await scene.visitGuest(table);
      const notice = guest.locator('#notice[data-code="PIN_LOCKED"]');
      await notice.waitFor();
      assert.match(await notice.textContent(), /Too many wrong PIN attempts/);
      await scene.screenshot(guest, 'unlock-guest-locked', { fullPage: true });

      // The console shows it, without a reload.
      await staff.locator(`#active-list tr[data-session-id="${table.sessionId}"][data-pin-locked="true"]`).waitFor({
        timeout: CONSOLE_POLL_MS + 10_000,
      });
      // The console shows times in the browser's locale and zone (en-US, UTC
      // in these tests), with the date in front on another day.
      const time = new Intl.DateTimeFormat('en-US', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }).format(
        new Date(lockedUntil),
      );
      const badge = (await row.locator('[data-role="pin-lock"]').textContent()).trim();
      assert.ok(badge.startsWith('Locked until ') && badge.endsWith(time), `"${badge}" names ${time}`);
      assert.equal(await row.locator('[data-role="pin"]').textContent(), table.pin, 'the PIN is still shown');
      const unlock = row.locator('button[data-action="unlock"]');
      assert.equal(await unlock.isVisible(), true);
      await scene.screenshot(staff, 'unlock-staff-locked', { fullPage: true });

      await unlock.click();
      await staff.locator(`#active-list tr[data-session-id="${table.sessionId}"][data-pin-locked="false"]`).waitFor();
      assert.equal(await row.locator('[data-action="unlock"]').count(), 0, 'the Unlock button is gone');
      assert.equal(await row.locator('[data-role="pin-lock"]').count(), 0);
      assert.equal(
        await staff.evaluate(() => document.activeElement?.closest('tr')?.dataset.sessionId),
        table.sessionId,
        'the focus stays on the table\'s row',
      );
      const after = await server.call('GET', `/api/v1/shops/${shop.shopId}/sessions?status=active`);
      assert.equal(after.sessions.find((s) => s.sessionId === table.sessionId).pinLockedUntil, null);

      // The guest tries again: in with the PIN, and an order goes through.
      await guest.locator('#retry').click();
      await guest.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
      await guest.locator('#live[data-state="live"]').waitFor();
      assert.equal(await guest.locator('#notice').isHidden(), true, 'no problem shown');
      assert.equal(await guest.locator('#table-label').textContent(), 'Table T7');
      assert.match(
        (await guest.evaluate((id) => sessionStorage.getItem(`ordergate.guestToken.${id}`), table.sessionId)) ?? '',
        /^og_guest_/,
        'the PIN was traded for a guest token',
      );
      await addToCart(guest, shop.items.cola);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const { orders } = await server.call('GET', `/api/v1/sessions/${table.sessionId}/orders`);
      assert.deepEqual(
        orders.map((o) => o.items.map((l) => l.menuItemId)),
        [[shop.items.cola]],
      );
      await scene.screenshot(guest, 'unlock-guest-in', { fullPage: true });
      await scene.screenshot(staff, 'unlock-staff-unlocked', { fullPage: true });
    }));
});
