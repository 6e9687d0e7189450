// Someone on the restaurant's Wi-Fi guesses PINs: 25 wrong ones from this
// machine, the same address as the phones, across a seated table and four
// others. That locks the seated table's PIN and, past 20, the whole
// address. The party already seated (its page traded the PIN for a guest
// token when it opened) still orders, and the ticket reaches the kitchen;
// a new visitor who only has the PIN is refused with PIN_LOCKED, at that
// table and at a table nobody guessed at.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { addToCart, recordApiRequests, ticket } from '../lib/pages.mjs';
import { PHONE, Scene } from '../lib/scene.mjs';

describe('a PIN sweep from the same address', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('25 wrong PINs lock nobody who already opened the table', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const tables = {};
      for (const label of ['T1', 'T2', 'T3', 'T4', 'T5', 'T6']) tables[label] = await server.openTable(shop.shopId, label);
      const seated = tables.T1;
      const kitchen = await scene.openKitchen();
      const guest = await scene.openGuest(seated);
      const tokenKey = `ordergate.guestToken.${seated.sessionId}`;
      const token = await guest.evaluate((key) => sessionStorage.getItem(key), tokenKey);
      assert.match(token ?? '', /^og_guest_/, 'the page holds a guest token for its table');
      const sent = recordApiRequests(guest);

      // The sweep: 5 wrong PINs at the seated table, then 5 at each of four
      // others. The address has 20 wrong guesses in it; the rest are refused
      // before they are judged.
      const answers = [];
      for (const label of ['T1', 'T2', 'T3', 'T4', 'T5']) {
        for (let i = 0; i < 5; i++) {
          const res = await server.guessPin(tables[label]);
          answers.push(`${res.status} ${res.body?.code}`);
        }
      }
      assert.deepEqual(answers, [...Array(20).fill('401 PIN_INVALID'), ...Array(5).fill('429 PIN_LOCKED')]);
      // The seated table's PIN, the right one, is locked now.
      const byPin = await server.request('GET', `/api/v1/sessions/${seated.sessionId}`, { auth: { pin: seated.pin } });
      assert.equal(byPin.status, 429);
      assert.equal(byPin.body.code, 'PIN_LOCKED');

      // The seated party orders all the same.
      await addToCart(guest, shop.items.burger, { toppings: [shop.toppings.cheese] });
      await addToCart(guest, shop.items.fries);
      await guest.locator('#confirm').click();
      const status = guest.locator('#status[data-state="success"]');
      await status.waitFor();
      const ticketNumber = Number(await status.getAttribute('data-ticket'));
      const orders = (await server.call('GET', `/api/v1/sessions/${seated.sessionId}/orders?limit=100`)).orders;
      assert.equal(orders.length, 1, 'the order is in the table history');
      const [order] = orders;
      assert.equal(order.ticketNumber, ticketNumber);
      await ticket(kitchen, order.orderId, 'placed').waitFor();
      // Its page stays live on the token: the kitchen's next step shows up.
      await server.setStatus(order.orderId, 'accepted');
      await guest.locator(`#orders > li[data-order-id="${order.orderId}"][data-order-status="accepted"]`).waitFor();
      assert.equal(await guest.locator('#live').getAttribute('data-state'), 'live');
      assert.equal(await guest.locator('#notice').isHidden(), true, 'the seated page shows no problem');

      // It sent the token, never the PIN.
      const post = sent.find((r) => r.method === 'POST' && r.path.endsWith('/orders'));
      assert.ok(post, 'the order was sent by the page');
      assert.equal(post.bearer, token);
      assert.equal(post.pin, null);
      assert.deepEqual(
        sent.filter((r) => r.pin !== null || r.params.pin !== undefined),
        [],
        'no request of the seated page carried the PIN',
      );
      await ticket(kitchen, order.orderId, 'accepted').waitFor();
      await scene.screenshot(guest, 'pin-sweep-seated-guest', { fullPage: true });
      await scene.screenshot(kitchen, 'pin-sweep-kitchen');

      // A new visitor with only the PIN: refused, at the seated table (its
      // own lock) and at a table nobody guessed at (the address's lock).
      for (const [label, lock] of [
        ['T1', /for this table/],
        ['T6', /from this address/],
      ]) {
        const phone = await scene.context(PHONE);
        const tried = recordApiRequests(phone);
        const visitor = await scene.visitGuest(tables[label], { context: phone, name: `visitor-${label}` });
        const notice = visitor.locator('#notice[data-code="PIN_LOCKED"]');
        await notice.waitFor();
        assert.match(await notice.textContent(), /Too many wrong PIN attempts/);
        assert.equal(await visitor.locator('#retry').isVisible(), true, 'the visitor can try again later');
        assert.equal(await visitor.locator('#menu-items .item').count(), 0, 'no menu, no ordering');
        assert.equal(await visitor.locator('#confirm').isDisabled(), true);
        assert.equal(
          await visitor.evaluate((id) => sessionStorage.getItem(`ordergate.guestToken.${id}`), tables[label].sessionId),
          null,
        );
        // What the server told the page, asked the same way.
        const exchange = await server.request('POST', `/api/v1/sessions/${tables[label].sessionId}/access`, {
          auth: { pin: tables[label].pin },
        });
        assert.equal(exchange.status, 429);
        assert.equal(exchange.body.code, 'PIN_LOCKED');
        assert.match(exchange.body.detail, lock);
        // The page asked once, with the PIN, to trade it for a token; after
        // the refusal it sent the PIN nowhere else.
        assert.deepEqual(tried, [
          {
            method: 'POST',
            path: `/api/v1/sessions/${tables[label].sessionId}/access`,
            params: {},
            bearer: null,
            pin: tables[label].pin,
          },
        ]);
        await scene.screenshot(visitor, `pin-sweep-visitor-${label}`, { fullPage: true });
      }
      assert.equal((await server.call('GET', `/api/v1/sessions/${seated.sessionId}/orders`)).orders.length, 1);
    }));
});
