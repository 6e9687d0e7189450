// Issue 17, the floor, in the staff console (helpers in lib/floor-console.mjs):
//   - Tables made once in the console (a name taken, an empty one: the
//     server's refusal on the field); each has a QR card whose code is its
//     permanent tableUrl (the svg says so, and a screenshot decodes to it),
//     "Scan to order" in the shop's languages; printed alone (one big card,
//     nothing else on the page: table-qr-card.png) or all on a sheet. Seat on
//     a free table opens a session for it and shows the PIN big (the API's
//     session's PIN); the floor links to its open table's row.
//   - A guest calls staff: the console shows it at the top with a chime
//     (WebAudio oscillators counted) while the kitchen display, open at the
//     same time in its rush layout at 1280×800, has it on screen;
//     Acknowledge in the console → the API says acknowledged and the kitchen
//     drops it. A bill request acknowledged with the kitchen's A key leaves
//     the console. Open calls are read on load; mute is remembered.
//     Saves console-service.png.
//   - A staff-entered order with a required choice: Add stays disabled until
//     it is chosen; an OUT_OF_STOCK refusal is shown on the line and loses
//     nothing; the answer lost on the way back is retried under the same
//     Idempotency-Key → one order (source staff), and the kitchen shows the
//     ticket with the choice and the note. Saves console-order.png.
//   - Kitchen settings in the console: the server's 422 on the field, then
//     saved → the open kitchen display's legend follows (menu.changed).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  draftLines,
  endPrint,
  guestCalls,
  openConsole,
  seatedTable,
  serviceRequests,
  stubPrint,
  submitTable,
  whollyOnScreen,
} from '../lib/floor-console.mjs';
import {
  audioRunning,
  chimes,
  countOscillators,
  openKitchenAt,
  oscillators,
  placeRush,
  setupBistro,
} from '../lib/kitchen-rush.mjs';
import { decodeQr, ticket } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

const TABLET = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };

describe('issue 17, the floor in the staff console', () => {
  let scene;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await scene?.close();
  });

  test('tables made once: QR cards of their permanent links, printed; Seat shows the PIN big', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Floor Bistro' });
      await server.call('PATCH', `/api/v1/shops/${shop.shopId}`, { body: { languages: ['en', 'ja'] } });
      const staff = await openConsole(scene, shop, { context: await scene.context(TABLET) });

      for (const name of ['T1', 'T2', 'Patio 1']) {
        await submitTable(staff, name);
        await staff.locator(`#floor-list tr[data-table-name="${name}"][data-state="free"]`).waitFor();
      }
      const { tables } = await server.call('GET', `/api/v1/shops/${shop.shopId}/tables`);
      assert.deepEqual(tables.map((t) => t.name).sort(), ['Patio 1', 'T1', 'T2']);
      assert.equal(await staff.locator('#new-table-name').inputValue(), '', 'the field is cleared for the next one');

      // The server's refusals, on the field: a name taken (409), an empty one (422).
      const input = staff.locator('#new-table-name');
      await submitTable(staff, 'T1');
      await staff.locator('#create-table-error', { hasText: 'already' }).waitFor();
      assert.equal(await input.getAttribute('aria-invalid'), 'true');
      assert.equal(await input.evaluate((el) => el === document.activeElement), true, 'the field has the focus');
      await submitTable(staff, '   ');
      await staff.locator('#create-table-error', { hasText: 'The name must not be empty.' }).waitFor();
      assert.equal((await server.call('GET', `/api/v1/shops/${shop.shopId}/tables`)).tables.length, 3);

      // Each card: the table's name, its tableUrl in the code, "Scan to order" in the shop's languages.
      await staff.locator('#table-cards-box > summary').click();
      for (const table of tables) {
        assert.match(table.tableUrl, new RegExp(`^${server.baseUrl}/q/[0-9a-f]{20}$`));
        const card = staff.locator(`#table-cards .qr-card[data-table-id="${table.tableId}"]`);
        assert.equal(await card.locator('.qr-card-name').textContent(), table.name);
        const svg = card.locator('svg[role="img"]');
        assert.equal(await svg.getAttribute('data-table-url'), table.tableUrl);
        assert.equal(decodeQr(await svg.screenshot()), table.tableUrl, `the code of ${table.name} decodes to its tableUrl`);
        assert.equal(await card.locator('.qr-card-scan span[lang="en"]').textContent(), 'Scan to order');
        assert.ok((await card.locator('.qr-card-scan span[lang="ja"]').textContent()).length > 0, 'and in Japanese');
      }

      // Print one card: it alone is on the page, big.
      const t1 = tables.find((t) => t.name === 'T1');
      await stubPrint(staff);
      await staff.locator(`#table-cards .qr-card[data-table-id="${t1.tableId}"] [data-action="print-card"]`).click();
      assert.equal(await staff.evaluate(() => window.__e2ePrints), 1);
      await staff.emulateMedia({ media: 'print' });
      const printed = await staff.evaluate(() => ({
        cards: [...document.querySelectorAll('#print-sheet .qr-card')].map((c) => c.dataset.tableId),
        shown: [...document.body.children].filter((el) => getComputedStyle(el).display !== 'none').map((el) => el.id),
      }));
      assert.deepEqual(printed, { cards: [t1.tableId], shown: ['print-sheet'] });
      const shot = await staff.screenshot({ animations: 'disabled' });
      assert.equal(decodeQr(shot), t1.tableUrl, 'the printed page decodes to the table’s link');
      const qrBox = await staff.locator('#print-sheet svg').boundingBox();
      assert.ok(qrBox.width >= 300, `the printed code is big (${qrBox.width} px)`);
      await scene.screenshot(staff, 'table-qr-card');
      await endPrint(staff);
      await eventually(async () => (await staff.locator('#print-sheet .qr-card').count()) === 0, {
        what: 'the print copy gone after printing',
      });
      assert.equal(await staff.evaluate(() => document.body.classList.contains('print-cards')), false);

      // Print all: a sheet with every card.
      await staff.locator('#print-cards').click();
      await staff.emulateMedia({ media: 'print' });
      assert.equal(await staff.locator('#print-sheet:not(.is-single) .qr-card').count(), 3);
      await scene.screenshot(staff, 'table-qr-sheet', { fullPage: true });
      await endPrint(staff);

      // Seat T2: its card shows the session's PIN, big.
      const t2 = tables.find((t) => t.name === 'T2');
      await staff.locator(`#floor-list tr[data-table-id="${t2.tableId}"] button[data-action="seat"]`).click();
      await staff.locator('#table-card[data-session-id]').waitFor({ state: 'visible' });
      const seated = (await server.call('GET', `/api/v1/shops/${shop.shopId}/tables`)).tables.find((t) => t.name === 'T2');
      assert.ok(seated.sessionId, 'the API has T2 seated');
      const session = await server.call('GET', `/api/v1/sessions/${seated.sessionId}`);
      assert.equal(session.tableLabel, 'T2');
      assert.equal(await staff.locator('#table-card').getAttribute('data-session-id'), session.sessionId);
      assert.equal(await staff.locator('#table-pin').textContent(), session.pin);
      assert.equal(await staff.locator('#table-qr').getAttribute('data-guest-url'), session.guestUrl);
      const pinSize = await staff.locator('#table-pin').evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
      assert.ok(pinSize >= 48, `the PIN is big enough to read from a metre (${pinSize} px)`);
      assert.equal(await whollyOnScreen(staff, '#table-pin'), true, 'the PIN is on screen');

      // The floor: T2 seated, linked to its open table's row.
      const row = staff.locator(`#floor-list tr[data-table-id="${t2.tableId}"][data-state="seated"]`);
      await row.waitFor();
      assert.equal(await row.getAttribute('data-session-id'), session.sessionId);
      await row.locator('[data-action="go-to-session"]').click();
      assert.equal(await staff.evaluate(() => document.activeElement?.id), `session-${session.sessionId}`);
      assert.equal(
        await staff.locator(`#active-list tr[data-session-id="${session.sessionId}"]`).getAttribute('data-table-label'),
        'T2',
      );
      assert.equal(await staff.locator('#floor-seated').textContent(), '1');
    }));

  test('a table calls: the console chimes, Acknowledge clears it on the kitchen display too; the kitchen’s A key', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Calling Bistro' });
      const { session } = await seatedTable(server, shop, 'Bar 1');
      await placeRush(server, shop, { count: 18 });
      const kitchen = await openKitchenAt(scene, shop, { context: await scene.context(TABLET), name: 'kitchen' });
      await kitchen.locator('#board li.ticket').nth(17).waitFor();
      const context = await scene.context(TABLET);
      await countOscillators(context);
      const staff = await openConsole(scene, shop, { context });
      await audioRunning(staff);
      const before = await chimes(staff);
      const notesBefore = await oscillators(staff);
      assert.equal(await staff.locator('#service-requests').isHidden(), true, 'no banner while nobody calls');

      // The guest calls (with the PIN): the console shows it at the top, with a chime.
      const res = await guestCalls(server, session, 'call');
      assert.equal(res.status, 201);
      const call = res.body;
      const inConsole = staff.locator(`#service-list li[data-request-id="${call.requestId}"]`);
      await inConsole.waitFor();
      assert.equal(await inConsole.getAttribute('data-kind'), 'call');
      assert.equal(await inConsole.getAttribute('data-table'), 'Bar 1');
      assert.match(await inConsole.locator('[data-role="age"]').textContent(), /just now/);
      assert.equal(await whollyOnScreen(staff, '#service-requests'), true, 'the banner is on screen');
      await eventually(async () => (await chimes(staff)).played === before.played + 1, { what: 'one chime' });
      assert.ok((await oscillators(staff)) >= notesBefore + 3, 'the call tune played its three notes');
      await eventually(async () => /Table Bar 1 calls for service/.test(await staff.locator('#announcer').textContent()), {
        what: 'the call read out',
      });

      // The kitchen, in its rush layout, has it on screen.
      const inKitchen = kitchen.locator(`#service-calls li[data-request-id="${call.requestId}"]`);
      await inKitchen.waitFor();
      assert.equal(await whollyOnScreen(kitchen, '#service'), true, 'tables calling is on the kitchen screen');
      await scene.screenshot(staff, 'console-service');

      // Acknowledge in the console: the API says so, the kitchen drops it.
      await inConsole.locator('button[data-action="ack"]').click();
      await inConsole.waitFor({ state: 'detached' });
      const acknowledged = await serviceRequests(server, shop.shopId, 'acknowledged');
      assert.deepEqual(
        acknowledged.map((r) => [r.requestId, r.status]),
        [[call.requestId, 'acknowledged']],
      );
      assert.ok(acknowledged[0].acknowledgedAt);
      assert.deepEqual(await serviceRequests(server, shop.shopId, 'open'), []);
      await inKitchen.waitFor({ state: 'detached' });
      await kitchen.locator('#service').waitFor({ state: 'hidden' });
      await staff.locator('#service-requests').waitFor({ state: 'hidden' });

      // The bill: the kitchen's A acknowledges the oldest call; the console drops it.
      const bill = (await guestCalls(server, session, 'bill')).body;
      const billInKitchen = kitchen.locator(`#service-calls li[data-request-id="${bill.requestId}"][data-kind="bill"]`);
      await billInKitchen.waitFor();
      await staff.locator(`#service-list li[data-request-id="${bill.requestId}"][data-kind="bill"]`).waitFor();
      assert.match(await kitchen.locator('#key-legend').textContent(), /A\s*acknowledge/);
      await kitchen.keyboard.press('a');
      await billInKitchen.waitFor({ state: 'detached' });
      await staff.locator(`#service-list li[data-request-id="${bill.requestId}"]`).waitFor({ state: 'detached' });
      assert.equal((await server.call('GET', `/api/v1/shops/${shop.shopId}/service-requests?status=open`)).requests.length, 0);
      await kitchen.keyboard.press('?');
      assert.match(await kitchen.locator('#help-dialog').textContent(), /Acknowledge the table calling longest/);
      await kitchen.keyboard.press('Escape');

      // Open calls are read on load; muted, a call is counted and not played; mute is remembered.
      const again = (await guestCalls(server, session, 'call')).body;
      await staff.reload();
      await staff.locator('#connection[data-state="live"]').waitFor();
      await staff.locator(`#service-list li[data-request-id="${again.requestId}"]`).waitFor();
      await staff.locator('#sound-toggle').click();
      assert.equal(await staff.locator('#sound-toggle').getAttribute('aria-pressed'), 'true');
      const mutedBefore = await chimes(staff);
      const lastBill = (await guestCalls(server, session, 'bill')).body;
      await eventually(async () => (await chimes(staff)).muted === mutedBefore.muted + 1, { what: 'a muted chime counted' });
      assert.equal((await chimes(staff)).played, mutedBefore.played, 'no chime while muted');
      await staff.reload();
      await staff.locator('#connection[data-state="live"]').waitFor();
      assert.equal(await staff.locator('#sound-toggle').getAttribute('aria-pressed'), 'true', 'mute is remembered');
      // The list is read once the stream is live: wait for it.
      for (const req of [again, lastBill]) await staff.locator(`#service-list li[data-request-id="${req.requestId}"]`).waitFor();
      assert.equal(await staff.locator('#service-list li').count(), 2, 'both calls still open, and only they');
    }));

  test('a staff order: the required choice first; a refusal keeps the draft; one ticket with the choice', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Order Bistro' });
      const { session } = await seatedTable(server, shop, 'T8');
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${shop.items.beer}`, { body: { stock: 5 } });
      const kitchen = await openKitchenAt(scene, shop, { context: await scene.context(TABLET), name: 'kitchen' });
      const staff = await openConsole(scene, shop, { context: await scene.context(TABLET) });
      const posts = [];
      staff.on('request', (req) => {
        if (req.method() === 'POST' && req.url().endsWith('/staff-orders')) posts.push(req.headers()['idempotency-key']);
      });

      const opener = staff.locator(`#active-list tr[data-session-id="${session.sessionId}"] [data-action="add-order"]`);
      await opener.click();
      const dialog = staff.locator('#order-dialog[open]');
      await dialog.waitFor();
      assert.equal(await dialog.getAttribute('data-session-id'), session.sessionId);
      assert.equal(await staff.evaluate(() => document.activeElement?.id), 'order-filter', 'the focus is in the dialog');

      // The steak: Add stays disabled, with the reason, until a doneness is chosen.
      await staff.locator(`#order-menu button[data-action="pick"][data-item-id="${shop.items.steak}"]`).click();
      const add = staff.locator('#order-line-add');
      await staff.locator('#order-line').waitFor({ state: 'visible' });
      assert.equal(await add.isDisabled(), true, 'cannot add without a doneness');
      assert.equal(await staff.locator('#order-line-reason').textContent(), 'Choose one Doneness.');
      assert.equal(await add.getAttribute('aria-describedby'), 'order-line-reason');
      assert.equal(
        await staff.locator('#order-line fieldset[data-required="true"] legend').textContent(),
        'Doneness (required, choose one)',
      );
      await staff.locator(`#order-line input[data-option-id="${shop.options.medium}"]`).check();
      assert.equal(await add.isDisabled(), false);
      await staff.locator('#order-line-note').fill('no salt');
      await staff.locator('#order-line-more').click();
      await add.click();
      await staff.locator('#order-pick').waitFor({ state: 'visible' });
      // Two beers, one tap each.
      const beer = staff.locator(`#order-menu button[data-action="pick"][data-item-id="${shop.items.beer}"]`);
      await beer.click();
      await beer.click();
      await eventually(async () => (await draftLines(staff)).length === 2, { what: 'two lines drafted' });
      let lines = await draftLines(staff);
      assert.deepEqual(
        lines.map((l) => [l.menuItemId, l.quantity]),
        [
          [shop.items.steak, 2],
          [shop.items.beer, 2],
        ],
      );
      assert.match(lines[0].text, /Medium.*no salt/s);

      // Only one beer left: the server refuses; the line says why and nothing is lost.
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${shop.items.beer}`, { body: { stock: 1 } });
      await eventually(async () => (await draftLines(staff))[1].warning !== '', { what: 'the menu’s count shown' });
      await staff.locator('#order-send').click();
      await staff.locator('#order-error', { hasText: 'Not enough stock' }).waitFor();
      lines = await draftLines(staff);
      assert.equal(lines[1].error, 'Beer: only 1 left (2 asked for).');
      assert.deepEqual(
        lines.map((l) => [l.menuItemId, l.quantity]),
        [
          [shop.items.steak, 2],
          [shop.items.beer, 2],
        ],
        'the draft is as it was',
      );
      assert.deepEqual((await server.call('GET', `/api/v1/sessions/${session.sessionId}/orders`)).orders, []);
      await scene.screenshot(staff, 'console-order');

      // One beer then; the first answer is lost on the way back: the page
      // sends again under the same key and gets the order once.
      await staff.locator(`#order-draft li[data-menu-item-id="${shop.items.beer}"] [data-action="less"]`).click();
      let dropped = false;
      await staff.route('**/staff-orders', async (route) => {
        if (dropped) return route.continue();
        dropped = true;
        await route.fetch();
        await route.abort('connectionreset');
      });
      await staff.locator('#order-send').click();
      await staff.locator('#order-dialog').waitFor({ state: 'hidden' });
      await staff.locator('#tables-status', { hasText: 'Ticket #1 sent to the kitchen for table T8' }).waitFor();
      assert.equal(await opener.evaluate((el) => el === document.activeElement), true, 'the focus is back on Add order');
      assert.equal(posts.length, 3, 'refused, lost, retried');
      assert.notEqual(posts[0], posts[1], 'a changed draft is a new request');
      assert.equal(posts[1], posts[2], 'the retry has the same Idempotency-Key');
      const { orders } = await server.call('GET', `/api/v1/sessions/${session.sessionId}/orders`);
      assert.equal(orders.length, 1, 'one order');
      const [order] = orders;
      assert.equal(order.source, 'staff');
      assert.deepEqual(
        order.items.map((l) => [l.menuItemId, l.quantity, (l.options ?? []).map((o) => o.optionId), l.note ?? null]),
        [
          [shop.items.steak, 2, [shop.options.medium], 'no salt'],
          [shop.items.beer, 1, [], null],
        ],
      );

      // The kitchen: the ticket, the choice and the note.
      const card = ticket(kitchen, order.orderId);
      await card.waitFor();
      assert.equal(await card.locator('.ticket-source').textContent(), 'Staff');
      const steak = card.locator(`li[data-menu-item-id="${shop.items.steak}"]`);
      assert.equal(await steak.locator(`.line-options li[data-option="${shop.options.medium}"]`).textContent(), 'Medium');
      assert.equal(await steak.locator('.line-note').textContent(), 'no salt');

      // A new dialog starts empty; the sent draft is gone.
      await opener.click();
      await dialog.waitFor();
      assert.equal((await draftLines(staff)).length, 0);
      await staff.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }));

  test('kitchen settings in the console: the server’s refusal on the field, then every display follows', () =>
    scene.run(async () => {
      const { server } = scene;
      const shop = await setupBistro(server, { name: 'E2E Settings Bistro' });
      const kitchen = await openKitchenAt(scene, shop, { name: 'kitchen' });
      await kitchen.locator('#age-legend', { hasText: 'Amber 5 min · red 10 min' }).waitFor();
      const staff = await openConsole(scene, shop);
      const warn = staff.locator('#kitchen-warn-minutes');
      const late = staff.locator('#kitchen-late-minutes');
      assert.equal(await warn.inputValue(), '5');
      assert.equal(await late.inputValue(), '10');

      await warn.fill('20');
      await late.fill('15');
      await staff.locator('#kitchen-save').click();
      await staff.locator('#kitchen-late-error', { hasText: 'must come after' }).waitFor();
      assert.equal(await late.getAttribute('aria-invalid'), 'true');
      assert.equal(await late.evaluate((el) => el === document.activeElement), true, 'the field named has the focus');
      assert.equal(await staff.locator('#kitchen-status').getAttribute('data-kind'), 'error');
      const unchanged = await server.call('GET', `/api/v1/shops/${shop.shopId}`);
      assert.deepEqual([unchanged.kitchenWarnMinutes, unchanged.kitchenLateMinutes], [5, 10]);

      await late.fill('30');
      await staff.locator('#kitchen-save').click();
      await staff.locator('#kitchen-status[data-kind="ok"]').waitFor();
      assert.equal(await late.getAttribute('aria-invalid'), null);
      const saved = await server.call('GET', `/api/v1/shops/${shop.shopId}`);
      assert.deepEqual([saved.kitchenWarnMinutes, saved.kitchenLateMinutes], [20, 30]);
      await kitchen.locator('#age-legend', { hasText: 'Amber 20 min · red 30 min' }).waitFor();
    }));
});
