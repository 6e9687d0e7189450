// Issue 17, "Guest page: defects seen": what a restaurant ran into, one test
// each, every one of them failing on the page as it was.
//   1. A tapped in-page link (a category chip, a tab, the "View your order"
//      bar) put its fragment in place of #pin=…, and a reload then asked for
//      "the full link from the QR code". Now the page holds the table's
//      guest token (sessionStorage), takes the PIN out of the address, and
//      in-page links scroll without touching it: a reload, or the link
//      without its fragment, opens the menu with the stored token alone. A
//      token that died says so.
//   2. A cancelled order still said "Order placed — ticket 3".
//   3. After a long outage the order stayed "could not confirm" until
//      tapped again; now it is sent again by itself, with the same key.
//   4. Placing an order by keyboard took 42 tabs and left the focus on the
//      body; now "Skip to your order" is the second tab stop and the focus
//      lands on the status.
//   5. At 320 px the "View your order" bar wrapped into three columns and
//      the "Table orders" tab was cut off.
//   6. The kitchen and the console showed the device's time, and the 86
//      "until" picker read the device's clock; all are the shop's now.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  boxes,
  deviceIn,
  instantToWall,
  menuShown,
  NARROW_PHONE,
  openStaffPage,
  setupShopIn,
  shownMinutes,
  staffSessionOrders,
  storedToken,
  tabUntil,
  wallMinutes,
  wallToInstant,
} from '../lib/floor.mjs';
import { addToCart, guestOrders, recordApiRequests, ticket } from '../lib/pages.mjs';
import { PHONE, SCREEN, Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

describe('issue 17: the guest page as a restaurant uses it', () => {
  let scene;
  before(async () => {
    // Orders follow each other quickly here: no cooldown between them.
    scene = await Scene.start({ serverArgs: ['--client-cooldown-ms', '0'] });
  });
  after(async () => {
    await scene?.close();
  });

  test('1. a tapped link, then a reload: the menu comes back with the stored token; a dead one is said so', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T1');
      const guest = await scene.openGuest(table);
      await addToCart(guest, shop.items.pie);

      // A category chip scrolls to its section.
      const chip = guest.locator('#categories a', { hasText: 'Desserts' });
      const section = (await chip.getAttribute('href')).slice(1);
      const scrolledTo = (id) => {
        const r = document.getElementById(id).getBoundingClientRect();
        return r.top >= 0 && r.top < window.innerHeight / 2;
      };
      await chip.click();
      await guest.waitForFunction(scrolledTo, section);

      // Reload: the menu, with the stored token first (no PIN, no new exchange).
      const token = await storedToken(guest, table.sessionId);
      assert.match(token ?? '', /^og_guest_/, 'the page holds the table\'s guest token');
      const sent = recordApiRequests(guest);
      await guest.reload();
      await menuShown(guest);
      assert.equal(await guest.locator('#notice').isHidden(), true, 'no problem shown after the reload');
      assert.deepEqual(
        sent.filter((r) => r.path.endsWith('/access') || r.pin || (r.bearer && r.bearer !== token)),
        [],
        'every call after the reload carried the stored token',
      );
      assert.ok(sent.some((r) => r.params.access_token === token), 'the stream too');
      await guest.locator(`#cart-lines > li[data-item-id="${shop.items.pie}"]`).waitFor();
      await addToCart(guest, shop.items.fries);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();

      // The address: the PIN is gone from it (the token is held), and
      // in-page links leave it alone: the chips, the tabs, the bar.
      const address = `${server.baseUrl}/t/${table.sessionId}`;
      assert.equal(guest.url(), address, 'no PIN in the address');
      await guest.evaluate(() => window.scrollTo(0, 0));
      await chip.click();
      // Its heading lands just below the sticky top bar, not under it.
      await guest.waitForFunction((id) => {
        const r = document.getElementById(id).getBoundingClientRect();
        const bar = document.querySelector('header').getBoundingClientRect();
        return r.top >= bar.bottom - 1 && r.top < bar.bottom + 40;
      }, section);
      assert.equal(await guest.evaluate(() => document.activeElement?.id), section, 'the focus moved to the section');
      assert.equal(guest.url(), address, 'the chip did not change the address');
      await addToCart(guest, shop.items.rings);
      await guest.locator('header nav a[href="#history"]').click();
      assert.equal(guest.url(), address, 'the tab did not change the address');
      await guest.evaluate(() => window.scrollTo(0, 0));
      await guest.locator('#cart-bar a').click();
      await guest.waitForFunction(() => document.activeElement?.id === 'cart');
      assert.equal(guest.url(), address, 'the bar did not change the address');

      // The link without any fragment (a restored tab, a bookmark): the menu.
      await guest.goto(address);
      await menuShown(guest);
      await guest.locator(`#cart-lines > li[data-item-id="${shop.items.rings}"]`).waitFor();
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      assert.equal((await staffSessionOrders(server, table)).length, 2, 'both orders were placed');

      // A token that died without the page hearing of it (expired): no PIN
      // to trade in again, so the page says so instead of "bad link".
      await guest.evaluate(
        (id) => sessionStorage.setItem(`ordergate.guestToken.${id}`, `og_guest_${'0'.repeat(64)}`),
        table.sessionId,
      );
      await guest.reload();
      await guest.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
      const ended = guest.locator('#notice[data-code="ACCESS_ENDED"]');
      await ended.waitFor();
      assert.match(await ended.textContent(), /scan the QR code on your table again/);
      assert.equal(await guest.locator('#confirm').isDisabled(), true);

      // A checkout the page saw: a reload says the table is checked out.
      const other = await server.openTable(shop.shopId, 'T1b');
      const seated = await scene.openGuest(other, { name: 'guest-checkout' });
      await server.call('POST', `/api/v1/sessions/${other.sessionId}/checkout`);
      await seated.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();
      await seated.reload();
      await seated.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
      await seated.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();

      // A phone with neither the PIN nor a token: the QR code is needed.
      const stranger = await scene.page(await scene.context(PHONE), 'guest-no-pin');
      await stranger.goto(address);
      await stranger.locator('#notice[data-code="BAD_LINK"]').waitFor();
    }));

  test('2. staff cancel an order: the status box and the order list say so', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T2');
      const guest = await scene.openGuest(table);
      await addToCart(guest, shop.items.pie);
      await guest.locator('#confirm').click();
      const status = guest.locator('#status');
      await guest.locator('#status[data-state="success"]').waitFor();
      const [order] = await staffSessionOrders(server, table);
      assert.equal(await status.textContent(), `Order placed — ticket ${order.ticketNumber}`);

      // The box follows the order placed last ...
      await server.setStatus(order.orderId, 'accepted');
      await guest.locator('#status[data-order-status="accepted"]').waitFor();
      assert.equal(await status.textContent(), `Ticket ${order.ticketNumber}: the kitchen has accepted your order.`);

      // ... to its cancellation, where the guest looks.
      await server.setStatus(order.orderId, 'cancelled');
      await guest.locator('#status[data-state="cancelled"][data-order-status="cancelled"]').waitFor();
      assert.match(await status.textContent(), new RegExp(`^Ticket ${order.ticketNumber} was cancelled by the restaurant\\.`));
      assert.equal(await status.getAttribute('aria-live'), 'assertive');
      assert.equal(await status.getAttribute('data-order-id'), order.orderId);
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="cancelled"]`).waitFor();
      assert.deepEqual(await guestOrders(guest), [
        { orderId: order.orderId, status: 'cancelled', ticket: order.ticketNumber, label: 'Cancelled' },
      ]);
      await scene.screenshot(guest, 'defects-cancelled', { fullPage: true });
    }));

  test('3. the connection drops while placing, then comes back: the same key goes again by itself, one order', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T3');
      const phone = await scene.context(PHONE);
      const guest = await scene.openGuest(table, { context: phone });
      await addToCart(guest, shop.items.pie);

      const ordersPath = `/api/v1/sessions/${table.sessionId}/orders`;
      const isOrderPost = (req) => req.method() === 'POST' && new URL(req.url()).pathname === ordersPath;
      const keys = [];
      const answers = [];
      guest.on('request', (req) => { if (isOrderPost(req)) keys.push(req.headers()['idempotency-key']); });
      guest.on('response', async (res) => {
        if (!isOrderPost(res.request())) return;
        answers.push({ status: res.status(), replayed: res.headers()['idempotent-replayed'] === 'true' });
      });

      // The first POST reaches the server and is committed; its answer is
      // lost with the connection. Then the restaurant's Wi-Fi is gone.
      let committed = null;
      const outage = async (route) => {
        if (!committed && isOrderPost(route.request())) {
          const response = await route.fetch();
          committed = await response.json();
          await phone.setOffline(true);
        }
        await route.abort('internetdisconnected');
      };
      await guest.route('**/api/**', outage);
      await guest.locator('#confirm').click();
      const unconfirmed = guest.locator('#status[data-state="error"][data-code="NOT_CONFIRMED"]');
      await unconfirmed.waitFor({ timeout: 60_000 });
      assert.equal(committed?.status, 'placed', 'the first attempt was committed');
      await guest.waitForTimeout(2_000);
      assert.equal((await staffSessionOrders(server, table)).length, 1);

      // The connection comes back. Nobody taps anything.
      await guest.unroute('**/api/**', outage);
      await phone.setOffline(false);
      const success = guest.locator('#status[data-state="success"]');
      await success.waitFor({ timeout: 45_000 });
      await guest.locator('#live[data-state="live"]').waitFor();

      assert.equal(await success.textContent(), `Order placed — ticket ${committed.ticketNumber}`, 'the message is cleared');
      assert.equal(await success.getAttribute('data-code'), null);
      assert.ok(keys.length >= 2, `sent again (${keys.length} attempts)`);
      assert.equal(new Set(keys).size, 1, 'every attempt carried the same Idempotency-Key');
      assert.deepEqual(answers.at(-1), { status: 201, replayed: true }, 'the resend got the original answer, replayed');
      const orders = await staffSessionOrders(server, table);
      assert.deepEqual(orders.map((o) => o.orderId), [committed.orderId], 'exactly one order');
      await guest.locator('#cart-empty').waitFor();
      await guest.locator(`#orders > li[data-order-id="${committed.orderId}"]`).waitFor();
      assert.equal((await guestOrders(guest)).length, 1);

      // The server stops answering while the phone still thinks it is
      // online (no browser event, the stream still open): the page finds
      // out by itself that it is back, and sends the order again.
      keys.length = 0;
      let reached = 0;
      const silent = async (route) => {
        if (isOrderPost(route.request()) && reached++ === 0) {
          await route.fetch();
        }
        await route.abort('connectionreset');
      };
      await addToCart(guest, shop.items.cola);
      await guest.route('**/api/**', silent);
      await guest.locator('#confirm').click();
      await unconfirmed.waitFor({ timeout: 60_000 });
      await guest.unroute('**/api/**', silent);
      await success.waitFor({ timeout: 45_000 });
      assert.equal(new Set(keys).size, 1, 'the same key again');
      assert.deepEqual(answers.at(-1), { status: 201, replayed: true });
      assert.equal((await staffSessionOrders(server, table)).length, 2, 'one more order, once');
    }));

  test('4. keyboard only: "Skip to your order" early, few tabs to place, the focus lands on the status', (t) =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T4');
      const guest = await scene.openGuest(table);

      // A dish into the cart by keyboard: skip to the menu, Tab to its Add.
      await guest.keyboard.press('Tab');
      assert.equal(await guest.evaluate(() => document.activeElement?.getAttribute('href')), '#menu');
      await guest.keyboard.press('Enter');
      const fries = shop.items.fries;
      await tabUntil(guest, () => document.activeElement?.matches('button[data-action="add"]')
        && document.activeElement.closest('.item')?.textContent.includes('Fries'), { what: 'the Add button of Fries' });
      assert.equal(await guest.evaluate(() => document.activeElement.dataset.itemId), fries);
      await guest.keyboard.press('Enter');
      await guest.locator(`#cart-lines > li[data-item-id="${fries}"]`).waitFor();

      // The table's link opened again on this phone (the cart is kept): from
      // the top of the page to the order.
      const page = await scene.visitGuest(table, { context: guest.context(), name: 'guest-again' });
      await menuShown(page);
      let tabs = await tabUntil(page, () => document.activeElement?.matches('a.skip-link[href="#cart"]'), {
        max: 2,
        what: '"Skip to your order"',
      });
      const skip = page.locator('a.skip-link[href="#cart"]');
      assert.equal((await skip.textContent()).trim(), 'Skip to your order');
      assert.equal(await skip.isVisible(), true, 'shown while focused');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.activeElement?.id === 'cart');
      tabs += await tabUntil(page, () => document.activeElement?.id === 'confirm', { max: 12, what: 'Place order' });
      t.diagnostic(`tabs from the top of the page to "Place order": ${tabs}`);
      assert.ok(tabs <= 10, `${tabs} tabs to "Place order"`);

      await page.keyboard.press('Enter');
      await page.locator('#status[data-state="success"]').waitFor();
      await page.waitForFunction(() => document.activeElement?.id === 'status');
      const [order] = await staffSessionOrders(server, table);
      assert.equal(
        await page.evaluate(() => document.activeElement.textContent),
        `Order placed — ticket ${order.ticketNumber}`,
        'the focus is on the status, which says how it went',
      );
    }));

  test('5. at 320 px the "View your order" bar is one row and the tabs are fully visible (390 px too)', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await server.openTable(shop.shopId, 'T5');
      for (const device of [NARROW_PHONE, PHONE]) {
        const width = device.viewport.width;
        const guest = await scene.openGuest(table, { context: await scene.context(device), name: `guest-${width}` });
        await addToCart(guest, shop.items.burger);
        await addToCart(guest, shop.items.pie);
        await guest.evaluate(() => window.scrollTo(0, 0));
        await guest.locator('#cart-bar a').waitFor({ state: 'visible' });

        const [link] = await boxes(guest, '#cart-bar a');
        const parts = await boxes(guest, '#cart-bar [data-i18n="cart.view"], #cart-bar-count, #cart-bar-total');
        assert.equal(parts.length, 3);
        assert.deepEqual(parts.map((p) => p.text), ['View your order', '2 dishes', '$18.90']);
        for (const p of parts) {
          assert.equal(p.lines, 1, `${width} px: "${p.text}" is on one line`);
          const middle = (b) => (b.top + b.bottom) / 2;
          assert.ok(Math.abs(middle(p) - middle(link)) < 4, `${width} px: "${p.text}" on the bar's row`);
          assert.ok(
            p.left >= link.left && p.right <= link.right && p.right <= width,
            `${width} px: "${p.text}" inside the bar`,
          );
        }
        assert.ok(link.bottom - link.top < 50, `${width} px: the bar is one row (${link.bottom - link.top} px high)`);
        const label = guest.locator('#cart-bar [data-i18n="cart.view"]');
        assert.ok(await label.evaluate((el) => el.scrollWidth <= el.clientWidth), `${width} px: the label is not cut`);

        const tabs = await boxes(guest, 'header nav a');
        assert.deepEqual(tabs.map((x) => x.text.replace(/\s+\d+$/, '')), ['Menu', 'Your order', 'Table orders']);
        for (const tab of tabs) {
          assert.ok(
            tab.left >= 0 && tab.right <= width,
            `${width} px: the "${tab.text}" tab is fully visible (${tab.left}–${tab.right})`,
          );
          assert.equal(tab.lines, 1, `${width} px: "${tab.text}" on one line`);
        }
        assert.ok(new Set(tabs.map((x) => Math.round(x.top))).size === 1, `${width} px: the tabs are one row`);
        assert.ok(
          await guest.locator('header nav').evaluate((el) => el.scrollWidth <= el.clientWidth),
          `${width} px: nothing of the tabs is scrolled out of sight`,
        );
        await scene.screenshot(guest, `defects-${width}px`);
      }
    }));

  test('6. a shop in Pacific/Auckland: guest, kitchen and console show its time; an 86 "until" is its wall clock', () =>
    scene.run(async () => {
      const { server } = scene;
      const zone = 'Pacific/Auckland';
      const shop = await setupShopIn(server, zone);
      const table = await server.openTable(shop.shopId, 'A1');
      // Every device's clock is set elsewhere: the phone in New York, the
      // kitchen tablet and the console in London.
      const kitchen = await openStaffPage(scene, shop, 'kitchen', { context: await deviceIn(scene, SCREEN, 'Europe/London') });
      const staff = await openStaffPage(scene, shop, 'staff', { context: await deviceIn(scene, SCREEN, 'Europe/London') });
      await staff.locator(`#inventory-list tr[data-item-id="${shop.items.coffee}"]`).waitFor();
      const guest = await scene.openGuest(table, { context: await deviceIn(scene, PHONE, 'America/New_York') });

      await addToCart(guest, shop.items.fish);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const [order] = await staffSessionOrders(server, table);
      const placed = wallMinutes(order.createdAt, zone);
      assert.notEqual(placed, wallMinutes(order.createdAt, 'America/New_York'));
      assert.notEqual(placed, wallMinutes(order.createdAt, 'Europe/London'));

      // The guest's order list, the kitchen's ticket and the console: one time, the shop's.
      const meta = await guest.locator(`#orders > li[data-order-id="${order.orderId}"] .order-meta`).textContent();
      assert.equal(shownMinutes(meta), placed, `the guest page: "${meta}"`);
      const age = ticket(kitchen, order.orderId).locator('time.ticket-age');
      await age.waitFor();
      const title = await age.getAttribute('title');
      assert.equal(shownMinutes(title), placed, `the kitchen ticket: "${title}"`);
      const clock = await kitchen.locator('#clock').textContent();
      const now = wallMinutes(new Date().toISOString(), zone);
      const off = Math.abs(shownMinutes(clock) - now);
      assert.ok(off <= 1 || off >= 1439, `the kitchen clock: "${clock}"`); // a minute either way, midnight too
      const opened = await staff.locator(`#active-list tr[data-session-id="${table.sessionId}"] time`).textContent();
      assert.equal(shownMinutes(opened), wallMinutes(table.openedAt, zone), `the console's table: "${opened}"`);
      const entry = await eventually(
        async () => (await server.audit(shop.shopId)).find((e) => e.orderId === order.orderId && e.code === 'ACCEPTED'),
        { what: 'the audit row' },
      );
      const auditTime = staff.locator(`#audit-list tr[data-code="ACCEPTED"][data-session-id="${table.sessionId}"] time`);
      await auditTime.waitFor();
      assert.equal(shownMinutes(await auditTime.textContent()), wallMinutes(entry.at, zone), 'the console\'s audit');

      // An 86 until tomorrow 18:30, typed as the shop's time.
      const local = `${instantToWall(Date.now() + 24 * 3600_000, zone).slice(0, 10)}T18:30`;
      const row = staff.locator(`#inventory-list tr[data-item-id="${shop.items.coffee}"]`);
      await row.locator('[data-field="sold-out-until"]').fill(local);
      await row.locator('[data-action="toggle-sold-out"]').click();
      await staff.locator(`#inventory-list tr[data-item-id="${shop.items.coffee}"][data-sold-out="true"]`).waitFor();
      const { entries } = await server.call('GET', `/api/v1/shops/${shop.shopId}/inventory`);
      const coffee = entries.find((e) => e.itemId === shop.items.coffee);
      assert.equal(Date.parse(coffee.soldOutUntil), Date.parse(wallToInstant(local, zone)), `stored as ${local} in ${zone}`);
      const until = await row.locator('[data-role="sold-out-until"]').textContent();
      assert.equal(shownMinutes(until), 18 * 60 + 30, `the console says "${until}"`);
      await scene.screenshot(staff, 'defects-staff-zone');
    }));
});
