// Staff check a table out while its guest page is open: the page says the
// table is closed and stops ordering, and its event stream stops too (the
// guest token died at checkout; reconnecting could only be refused). That
// holds for a page that saw the checkout live, for one whose stream only
// reached the server after it (refused: the page asks why, and closes), and
// for the link opened again.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { addToCart, recordApiRequests } from '../lib/pages.mjs';
import { PHONE, Scene } from '../lib/scene.mjs';

/** Longer than a few of the stream's reconnect attempts (it retries after 1 s). */
const QUIET_MS = 3_000;

describe('checkout closes the open guest pages', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('the page shows the table closed and stops reconnecting', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const live = await server.openTable(shop.shopId, 'T8');
      const late = await server.openTable(shop.shopId, 'T9');
      const guest = await scene.openGuest(live, { name: 'guest-live' });
      await addToCart(guest, shop.items.fries);

      // The other phone's stream is held on its way until after checkout.
      const phone = await scene.context(PHONE);
      let release;
      const checkedOut = new Promise((resolve) => {
        release = resolve;
      });
      await phone.route('**/events?*', async (route) => {
        await checkedOut;
        await route.continue();
      });
      const sent = { live: recordApiRequests(guest), late: recordApiRequests(phone) };
      const lateGuest = await scene.visitGuest(late, { context: phone, name: 'guest-late' });
      await lateGuest.locator('#menu-items[aria-busy="false"]').waitFor({ state: 'attached' });

      for (const table of [live, late]) {
        await server.call('POST', `/api/v1/sessions/${table.sessionId}/checkout`);
      }
      release();

      for (const [page, table, name] of [
        [guest, live, 'live'],
        [lateGuest, late, 'late'],
      ]) {
        await page.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();
        assert.match(await page.locator('#notice').textContent(), /checked out/);
        await page.locator('#live[data-state="closed"]').waitFor();
        assert.equal(await page.locator('#confirm').isDisabled(), true, `${name}: ordering is off`);
        assert.equal(
          await page.evaluate((id) => sessionStorage.getItem(`ordergate.guestToken.${id}`), table.sessionId),
          null,
          `${name}: the dead token is dropped`,
        );
      }
      const streamsOpened = (requests) => requests.filter((r) => r.path.endsWith('/events')).length;
      assert.equal(streamsOpened(sent.live), 0, 'the page that saw session.closed did not reconnect');
      assert.equal(streamsOpened(sent.late), 1, 'the late page\'s one stream, refused');
      await guest.waitForTimeout(QUIET_MS);
      assert.deepEqual(
        { live: streamsOpened(sent.live), late: streamsOpened(sent.late) },
        { live: 0, late: 1 },
        'no stream is opened again once the table is closed',
      );
      assert.equal(await guest.locator('#live').getAttribute('data-state'), 'closed');
      await scene.screenshot(guest, 'checkout-closed-guest', { fullPage: true });

      // The link opened again after checkout: closed, not an error.
      await guest.reload();
      await guest.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
      await guest.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();
      assert.match(await guest.locator('#notice').getAttribute('class'), /notice-warning/);
      assert.equal(streamsOpened(sent.live), 0);
    }));
});
