// Staff open a table in the console: the page shows its PIN and a QR code.
// A screenshot of the QR code, decoded, is exactly the guest URL the API
// gives for the session, and that URL opens the table's guest page.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { decodeQr } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';

describe('opening a table in the staff console', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('shows a QR code that decodes to the guest URL', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const staff = await scene.openStaff();

      await staff.locator('#table-label').fill('Patio 2');
      await staff.locator('#open-table-form button[type=submit]').click();
      const card = staff.locator('#table-card[data-session-id]');
      await card.waitFor({ state: 'visible' });
      await staff.locator('#active-list tr[data-table-label="Patio 2"]').waitFor();
      const sessionId = await card.getAttribute('data-session-id');

      // What the API says about the table just opened.
      const { sessions } = await server.call('GET', `/api/v1/shops/${shop.shopId}/sessions?status=active`);
      assert.equal(sessions.length, 1, 'one table open');
      const [session] = sessions;
      assert.equal(session.sessionId, sessionId);
      assert.equal(session.tableLabel, 'Patio 2');
      assert.equal(session.guestUrl, `${server.baseUrl}/t/${sessionId}#pin=${session.pin}`);

      // The card: label, PIN, and the link the QR code stands for.
      assert.equal(await staff.locator('#table-card-label').textContent(), 'Patio 2');
      assert.equal(await staff.locator('#table-pin').textContent(), session.pin);
      const qr = staff.locator('#table-qr');
      assert.equal(await qr.getAttribute('data-guest-url'), session.guestUrl);
      assert.equal(await staff.locator('#table-guest-url').getAttribute('href'), session.guestUrl);

      // Decode the QR code from a screenshot of it.
      const svg = qr.locator('svg[role="img"]');
      await svg.waitFor();
      const png = await svg.screenshot({ animations: 'disabled' });
      await scene.screenshot(svg, 'table-qr');
      const decoded = decodeQr(png);
      assert.equal(decoded, session.guestUrl, 'the QR code decodes to the guest URL');
      await scene.screenshot(staff, 'table-opened-staff', { fullPage: true });

      // And that URL is the table's guest page, PIN included.
      const guest = await scene.openGuest({ guestUrl: decoded });
      assert.equal(await guest.locator('#table-label').textContent(), 'Table Patio 2');
      assert.equal(await guest.locator('#notice').isHidden(), true, 'no problem shown');
      assert.ok((await guest.locator('#menu-items .item[data-item-id]').count()) > 0, 'the menu is shown');
    }));
});
