// Issue 17, "Tables and the floor", on the guest page (helpers in
// lib/table-card.mjs):
//   1. The permanent table card /q/{code}: a table nobody is seated at says
//      so; staff seat a party (by tableId) and the page asks for the PIN by
//      itself; a wrong PIN is said; the right one opens the menu, and an
//      order reaches the kitchen. A reload goes straight to the menu with
//      the stored guest token (no PIN sent); after checkout and a new party
//      the PIN is asked again (the old party's token is not used).
//   2. "Call staff": a double tap makes one request (the API's open list),
//      one line on the page; a reload still says "Calling staff…"; staff
//      acknowledge → "Staff are on the way." (and the top bar says so
//      further down the page); "Ask for the bill" too; checkout ends both.
//      On a 320 px phone.
//   3. The estimated wait: nothing while the API has none; three orders
//      cooked at once (0 min) → "under a minute" under the status of the
//      order the page placed, then by "Place order" once that order is
//      ready; four more that took a second (1 min, the server rounds up)
//      → a phone opening the card now says "about 1 min".
// Saves guest-pin-page.png (the card asking for the PIN), guest-service.png.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { boxes, menuShown, NARROW_PHONE, staffSessionOrders, storedToken } from '../lib/floor.mjs';
import { staffOrder } from '../lib/kitchen-rush.mjs';
import { addToCart, guestOrders, recordApiRequests } from '../lib/pages.mjs';
import { PHONE, Scene } from '../lib/scene.mjs';
import { eventually, wrongPin } from '../lib/server.mjs';
import {
  cook,
  createTable,
  enterWithPin,
  openCard,
  openRequests,
  recordExchanges,
  recordServicePosts,
  seatParty,
  sendPin,
} from '../lib/table-card.mjs';

describe('issue 17: the table card, calling staff, the wait', () => {
  let scene;
  before(async () => {
    // Orders follow each other quickly here: no cooldown between them.
    scene = await Scene.start({ serverArgs: ['--client-cooldown-ms', '0'] });
  });
  after(async () => {
    await scene?.close();
  });

  test('1. the table card: not open, then the PIN by itself; a wrong PIN said; in; a reload needs no PIN; a new party does', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await createTable(server, shop.shopId, 'T7');
      assert.match(table.tableUrl, /\/q\/[0-9a-f]+$/);
      const phone = await scene.context(PHONE);
      const guest = await scene.page(phone, 'guest-card');

      // Nobody seated yet: the card says so, and nothing else shows.
      await openCard(guest, table);
      await guest.locator('#gate[data-state="not-open"]').waitFor();
      assert.match(await guest.locator('#gate-status').textContent(), /^This table is not open yet\. Please ask the staff/);
      assert.equal(await guest.locator('#gate-title').textContent(), 'Table T7');
      for (const hidden of ['#menu', '#cart', '#history', '#tabs', '#service', '#pin-form', '#live']) {
        assert.equal(await guest.locator(hidden).isVisible(), false, `${hidden} is not shown yet`);
      }

      // Staff seat the party by the table's id: the page asks for the PIN by itself.
      const party = await seatParty(server, shop.shopId, table);
      assert.equal(party.tableLabel, 'T7');
      await guest.locator('#gate[data-state="pin"]').waitFor();
      assert.match(await guest.locator('#gate-status').textContent(), /^Your table is open\./);
      const input = guest.locator('#pin-input');
      assert.equal(await input.getAttribute('inputmode'), 'numeric');
      assert.equal(await input.getAttribute('autocomplete'), 'one-time-code');
      assert.equal(await guest.locator('label[for="pin-input"]').textContent(), 'Table PIN');
      assert.equal(await guest.evaluate(() => document.activeElement?.id), 'pin-input', 'the focus is on the PIN');
      await scene.screenshot(guest, 'guest-pin-page');

      // Too short: said, and nothing is sent. Wrong: the server's PIN_INVALID, said.
      const exchanges = recordExchanges(guest);
      await sendPin(guest, '12345');
      const error = guest.locator('#pin-error');
      await error.waitFor();
      assert.equal(await error.textContent(), 'Enter all six digits of the PIN.');
      await sendPin(guest, wrongPin(party.pin));
      await guest.locator('#pin-error', { hasText: 'That PIN is not right.' }).waitFor();
      assert.equal(await error.getAttribute('role'), 'alert');
      assert.equal(await input.getAttribute('aria-invalid'), 'true');
      assert.deepEqual(exchanges, [{ status: 401, code: 'PIN_INVALID' }], 'one exchange, refused by the server');

      // The right PIN: the menu, at the card's address.
      await sendPin(guest, party.pin);
      await menuShown(guest);
      assert.equal(await guest.locator('#gate').isHidden(), true);
      assert.equal(guest.url(), table.tableUrl, 'the address stays the card');
      assert.equal(await guest.locator('#table-label').textContent(), 'Table T7');
      const token = await storedToken(guest, party.sessionId);
      assert.match(token ?? '', /^og_guest_/, 'the PIN was traded for the table\'s guest token');

      // An order, seen by the kitchen (staff API).
      await addToCart(guest, shop.items.pie);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const [order] = await staffSessionOrders(server, party);
      const { orders: kitchen } = await server.call('GET', `/api/v1/shops/${shop.shopId}/orders?status=placed`);
      assert.ok(kitchen.some((o) => o.orderId === order.orderId && o.tableLabel === 'T7'), 'the kitchen has the order');

      // A reload: straight to the menu with the stored token, no PIN sent.
      const sent = recordApiRequests(phone);
      await guest.reload();
      await menuShown(guest);
      assert.equal(await guest.locator('#gate').isHidden(), true);
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"]`).waitFor();
      assert.deepEqual(
        sent.filter((r) => r.pin || r.params.pin || r.path.endsWith('/access')),
        [],
        'no X-Session-PIN, no ?pin=, no new exchange',
      );
      assert.ok(sent.some((r) => r.path === `/api/v1/tables/${table.code}` && !r.bearer), 'the card was read, without credentials');
      assert.ok(sent.some((r) => r.bearer === token), 'the stored token opened the table');

      // Checkout, then the next party at the same table: the PIN again.
      await server.call('POST', `/api/v1/sessions/${party.sessionId}/checkout`);
      await guest.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();
      sent.length = 0;
      await guest.reload();
      await guest.locator('#gate[data-state="not-open"]').waitFor();
      const next = await seatParty(server, shop.shopId, table);
      await guest.locator('#gate[data-state="pin"]').waitFor();
      assert.equal(await input.inputValue(), '');
      assert.deepEqual(sent.filter((r) => r.bearer), [], 'the last party\'s token is not used');
      await sendPin(guest, next.pin);
      await menuShown(guest);
      assert.deepEqual(await guestOrders(guest), [], 'the new party sees none of the last one\'s orders');
      const nextToken = await storedToken(guest, next.sessionId);
      assert.match(nextToken ?? '', /^og_guest_/);
      assert.notEqual(nextToken, token);
    }));

  test('2. call staff: a double tap calls once, a reload keeps it, staff acknowledge → "on the way"; the bill (320 px)', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await createTable(server, shop.shopId, 'T8');
      const party = await seatParty(server, shop.shopId, table);
      const guest = await scene.page(await scene.context(NARROW_PHONE), 'guest-service');
      await enterWithPin(guest, table, party);

      // Both buttons on one row, inside the 320 px screen.
      const buttons = await boxes(guest, '#call-staff, #ask-bill');
      assert.deepEqual(buttons.map((b) => b.text.replace(/^\S+\s+/, '')), ['Call staff', 'Ask for the bill']);
      for (const b of buttons) assert.ok(b.left >= 0 && b.right <= 320, `"${b.text}" inside the screen (${b.left}–${b.right})`);
      assert.equal(Math.round(buttons[0].top), Math.round(buttons[1].top), 'side by side');

      // A double tap: one request at the table, one line on the page.
      const posts = recordServicePosts(guest);
      await guest.locator('#call-staff').dblclick();
      const calling = guest.locator('#service[data-call-state="open"]');
      await calling.waitFor();
      const open = await eventually(async () => {
        const list = await openRequests(server, shop.shopId, party.sessionId);
        return list.length ? list : null;
      }, { what: 'the open request' });
      assert.equal(open.length, 1, 'exactly one open request');
      assert.equal(open[0].kind, 'call');
      assert.ok(posts.length >= 1 && posts.length <= 2, `${posts.length} POSTs`);
      const lines = guest.locator('#service-status > [data-kind]');
      assert.equal(await lines.count(), 1, 'one line');
      assert.equal(await lines.getAttribute('data-request-id'), open[0].requestId);
      assert.match(await lines.textContent(), /^Calling staff… \(since \d{1,2}:\d{2}/);
      assert.equal(await guest.locator('#service-status').getAttribute('role'), 'status');

      // A reload: still "Calling staff…", and nothing is sent again.
      posts.length = 0;
      await guest.reload();
      await menuShown(guest);
      await calling.waitFor();
      assert.equal(await lines.getAttribute('data-request-id'), open[0].requestId);
      assert.deepEqual(posts, []);

      // Staff acknowledge: the guest sees them coming.
      await server.call('POST', `/api/v1/service-requests/${open[0].requestId}/ack`);
      await guest.locator('#service[data-call-state="acknowledged"]').waitFor();
      assert.equal(await lines.textContent(), 'Staff are on the way.');
      // Further down the page, the top bar says so (a link back to the panel).
      await guest.locator('#history').scrollIntoViewIfNeeded();
      const badge = guest.locator('#service-badge[data-state="acknowledged"]');
      await badge.waitFor();
      assert.equal(await badge.textContent(), 'Staff on the way');
      await badge.click();
      await guest.waitForFunction(() => document.activeElement?.id === 'service');
      await badge.waitFor({ state: 'hidden' });
      // The shot from the top of the page, the smooth scroll settled.
      await guest.evaluate(() => window.scrollTo({ top: 0, behavior: 'instant' }));
      await scene.screenshot(guest, 'guest-service');

      // The bill: its own request.
      await guest.locator('#ask-bill').click();
      await guest.locator('#service[data-bill-state="open"]').waitFor();
      const bills = await openRequests(server, shop.shopId, party.sessionId);
      assert.deepEqual(bills.map((r) => r.kind), ['bill'], 'the call was acknowledged; the bill is open');
      assert.match(
        await guest.locator('#service-status > [data-kind="bill"]').textContent(),
        /^Asking for the bill… \(since /,
      );

      // Checkout acknowledges it and closes the table: nothing more to ask for.
      await server.call('POST', `/api/v1/sessions/${party.sessionId}/checkout`);
      await guest.locator('#notice[data-code="SESSION_CLOSED"]').waitFor();
      await guest.locator('#service').waitFor({ state: 'hidden' });
      assert.deepEqual(await openRequests(server, shop.shopId, party.sessionId), []);
    }));

  test('3. the estimated wait: none at first, then the API\'s number under the status, then by "Place order"', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const table = await createTable(server, shop.shopId, 'T9');
      const party = await seatParty(server, shop.shopId, table);
      const guest = await scene.page(await scene.context(PHONE), 'guest-wait');
      const waitPath = `/api/v1/shops/${shop.shopId}/wait`;
      const readWait = () => server.call('GET', waitPath, { auth: null });
      assert.equal((await readWait()).estimatedMinutes, null, 'no orders ready yet');
      await enterWithPin(guest, table, party);
      assert.equal(await guest.locator('#wait').isHidden(), true, 'nothing without an estimate');

      // The guest orders; the kitchen cooks three orders of the table at
      // once: the median is under a second, 0 minutes.
      await addToCart(guest, shop.items.fries);
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const [mine] = await staffSessionOrders(server, party);
      const cola = [{ menuItemId: shop.items.cola, quantity: 1 }];
      const quick = [];
      for (let i = 0; i < 3; i++) quick.push(await staffOrder(server, party, cola));
      await cook(server, quick);
      assert.deepEqual(await readWait(), { estimatedMinutes: 0, sampleSize: 3, windowMinutes: 60 });

      // The page reads it again on the table's order.updated events (at
      // most once per 30 s): under the status of the order still cooking.
      // 0 is not "about 0 min".
      const underStatus = guest.locator('#status-wait[data-minutes="0"]');
      await underStatus.waitFor({ timeout: 45_000 });
      assert.equal(await underStatus.textContent(), 'Food takes under a minute right now.');
      assert.equal(await guest.locator('#wait').isHidden(), true, 'said once');

      // The guest's order and three more take a second or more: four of
      // seven, so the median is one of them, 1 minute.
      const slow = [mine];
      for (let i = 0; i < 3; i++) slow.push(await staffOrder(server, party, cola));
      await cook(server, slow, { cookMs: 1000 });
      assert.deepEqual(await readWait(), { estimatedMinutes: 1, sampleSize: 7, windowMinutes: 60 });

      // The guest's own order is ready: the estimate the page has moves by "Place order".
      await guest.locator('#status[data-order-status="ready"]').waitFor();
      await guest.locator('#wait[data-minutes="0"]').waitFor();
      assert.equal(await guest.locator('#wait').textContent(), 'Food takes under a minute right now.');
      assert.equal(await guest.locator('#status-wait').isHidden(), true);

      // A phone opening the card now reads it at once (its own cache): about 1 min.
      const other = await scene.page(await scene.context(PHONE), 'guest-wait-2');
      await enterWithPin(other, table, party);
      const byButton = other.locator('#wait[data-minutes="1"]');
      await byButton.waitFor();
      assert.equal(await byButton.textContent(), 'Food takes about 1 min right now.');
      assert.equal(await other.locator('#status-wait').isHidden(), true, 'this phone has no order cooking');
    }));
});
