// Menus restaurants run, on the guest's phone: a steak with a required
// "Doneness" (one option +¥100) and optional "Sides" (up to 2, Fries
// tracked in stock), allergens and dietary tags.
//   - The item sheet: "Add" is disabled, with the reason tied to it, until a
//     doneness is chosen; the total follows option and topping prices; at
//     most two sides; a line note; Escape closes it and focus comes back.
//   - Two steaks of different doneness are two cart lines; the order carries
//     optionIds and the note, the API's order has the options and the note,
//     and the kitchen display shows them.
//   - Fries at stock 0 is disabled in the sheet, live.
//   - The allergen filter hides the steak when beef is left out; tags keep
//     only tagged dishes; the filter is announced and cleared in one tap.
//   - Choices that break a group changed by staff meanwhile are refused
//     (INVALID_OPTIONS) and shown; the guest changes the line and orders.
//   - With shop languages (when the server has them): 日本語 switches the
//     page's texts, <html lang>, the menu's texts and yen formatting.
//   - With images (when the server has them): the steak's photo in the list
//     (lazy, alt = its name, in a box of fixed proportions) and larger in
//     the sheet; dishes without one get a decorative stand-in.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  addFromSheet, cartLines, editGroup, makePng, openFilters, openSheet, optionInput, setItemImage, setupGrill,
  sheetState, uploadImage, visibleItems, waitForSheetTotal,
} from '../lib/guest-menu.mjs';
import { ticket } from '../lib/pages.mjs';
import { PHONE, Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

const yen = (n, locale = 'en-US') => new Intl.NumberFormat(locale, { style: 'currency', currency: 'JPY' }).format(n);

describe('the guest page: option groups, line notes, allergens and the filter', () => {
  let scene;
  let grill;
  before(async () => {
    scene = await Scene.start({ serverArgs: ['--client-cooldown-ms', '0'] });
    grill = await setupGrill(scene.server);
    // The kitchen display and the screenshots are of the grill.
    scene.shop = { ...scene.shop, shopId: grill.shopId, name: grill.name };
  });
  after(async () => {
    await scene?.close();
  });

  test('the sheet, the order with options and a note, the kitchen, stock and the filter', () =>
    scene.run(async () => {
      const { server } = scene;
      const { items, options, groups, toppings } = grill;
      const table = await server.openTable(grill.shopId, 'G1');
      const guest = await scene.openGuest(table);

      // ── the menu: allergens and tags as text, Choose for the steak ──
      const steak = guest.locator(`#menu-items .item[data-item-id="${items.steak}"]`);
      assert.equal(await steak.getAttribute('data-has-choices'), 'true');
      assert.deepEqual(
        (await steak.locator('[data-role="allergens"] li[data-allergen]').allTextContents()).map((s) => s.trim()),
        ['🐄Beef', '🥛Milk'],
      );
      assert.equal(
        await steak.locator('[data-role="allergens"] .diet-icon').first().getAttribute('aria-hidden'),
        'true',
        'the icon is decoration; the word is the information',
      );
      assert.match(await steak.locator('li[data-tag="gluten_free"]').textContent(), /Gluten-free/);
      assert.match(await guest.locator(`.item[data-item-id="${items.satay}"] li[data-tag="spicy"]`).textContent(), /Spicy/);
      assert.equal(await guest.locator(`button[data-action="add"][data-item-id="${items.steak}"]`).count(), 0,
        'no quick Add for an item with a required choice');
      assert.equal(await guest.locator(`button[data-action="add"][data-item-id="${items.satay}"]`).count(), 1,
        'a quick Add for an item without choices');

      // ── the sheet: Escape closes it, focus comes back ──
      const choose = guest.locator(`button[data-action="choose"][data-item-id="${items.steak}"]`);
      await openSheet(guest, items.steak);
      assert.equal(await guest.evaluate(() => document.activeElement?.id), 'sheet-title', 'focus moves into the sheet');
      assert.equal(await guest.locator('#item-sheet').getAttribute('aria-labelledby'), 'sheet-title');
      assert.equal((await guest.locator('#sheet-title').textContent()).trim(), 'Steak');
      await guest.keyboard.press('Escape');
      await guest.locator('#item-sheet:not([open])').waitFor({ state: 'attached' });
      assert.equal(await choose.evaluate((b) => b === document.activeElement), true, 'focus is back on Choose');

      // ── Add waits for a doneness, and says so ──
      await openSheet(guest, items.steak);
      let s = await sheetState(guest);
      assert.equal(s.addDisabled, true, 'Add is disabled while Doneness is not chosen');
      assert.equal(s.reason, 'Doneness: choose one.');
      assert.equal(s.describedBy, 'sheet-reason', 'the reason is tied to the button');
      assert.equal(s.total, yen(2000));
      const doneness = guest.locator(`#item-sheet fieldset[data-group-id="${groups.doneness}"]`);
      assert.equal(await doneness.getAttribute('data-required'), 'true');
      assert.deepEqual(
        await doneness.locator('input[data-option-id]').evaluateAll((els) => els.map((e) => e.type)),
        ['radio', 'radio', 'radio'],
      );
      assert.match(await guest.locator(`#item-sheet label[data-option-label="${options.mediumRare}"]`).textContent(), /\+¥100/);
      const sides = guest.locator(`#item-sheet fieldset[data-group-id="${groups.sides}"]`);
      assert.deepEqual(
        await sides.locator('input[data-option-id]').evaluateAll((els) => els.map((e) => e.type)),
        ['checkbox', 'checkbox', 'checkbox'],
      );

      await optionInput(guest, options.mediumRare).check();
      await waitForSheetTotal(guest, yen(2100));
      s = await sheetState(guest);
      assert.equal(s.addDisabled, false);
      assert.equal(s.reason, '');

      // Sides: up to two; the third is disabled until one is taken off.
      await optionInput(guest, options.fries).check();
      await optionInput(guest, options.salad).check();
      await waitForSheetTotal(guest, yen(2600));
      assert.equal(await optionInput(guest, options.rice).isDisabled(), true, 'a third side cannot be ticked');
      await optionInput(guest, options.salad).uncheck();
      await waitForSheetTotal(guest, yen(2400));
      assert.equal(await optionInput(guest, options.rice).isEnabled(), true);
      // A topping counts too.
      await guest.locator(`#item-sheet input[data-topping-id="${toppings.garlicButter}"]`).check();
      await waitForSheetTotal(guest, yen(2550));
      await guest.locator(`#item-sheet input[data-topping-id="${toppings.garlicButter}"]`).uncheck();
      await waitForSheetTotal(guest, yen(2400));

      await guest.locator('#sheet-note').fill('no salt, please');
      assert.equal((await guest.locator('#sheet-note-count').textContent()).trim(), '15 / 140');
      await guest.locator('#sheet-inc').click();
      await waitForSheetTotal(guest, yen(4800));
      assert.equal((await sheetState(guest)).quantity, 2);
      await scene.screenshot(guest, 'guest-item-sheet');

      await addFromSheet(guest);
      assert.equal(await choose.evaluate((b) => b === document.activeElement), true, 'focus is back on Choose');
      let lines = await cartLines(guest);
      assert.equal(lines.length, 1);
      assert.deepEqual(lines[0].optionIds, [options.mediumRare, options.fries].sort());
      assert.equal(lines[0].options, 'Medium rare, Fries');
      assert.equal(lines[0].note, 'Note: no salt, please');
      assert.equal(lines[0].quantity, 2);
      assert.equal(lines[0].total, yen(4800));

      // A second steak, rare and without a note: another line.
      await openSheet(guest, items.steak);
      assert.equal((await sheetState(guest)).addDisabled, true, 'a fresh sheet starts without choices');
      await optionInput(guest, options.rare).check();
      await addFromSheet(guest);
      // And a satay with the quick Add.
      await guest.locator(`button[data-action="add"][data-item-id="${items.satay}"]`).click();
      await guest.locator(`#cart-lines > li[data-item-id="${items.satay}"]`).waitFor();
      lines = await cartLines(guest);
      const steaks = lines.filter((l) => l.itemId === items.steak);
      assert.equal(steaks.length, 2, 'two steaks of different doneness are two lines');
      assert.notEqual(steaks[0].key, steaks[1].key);
      assert.ok(steaks[0].key.includes(options.mediumRare) && steaks[0].key.includes('no%20salt'), steaks[0].key);
      assert.equal((await guest.locator('#cart-total').textContent()).trim(), yen(4800 + 2000 + 900));

      // ── the order: optionIds and note go out, the API has them ──
      const posted = [];
      guest.on('request', (req) => {
        if (req.method() === 'POST' && /\/orders$/.test(new URL(req.url()).pathname)) posted.push(req.postDataJSON());
      });
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      assert.equal(posted.length, 1);
      const sentSteak = posted[0].items.find((l) => l.menuItemId === items.steak && l.note);
      assert.deepEqual([...sentSteak.optionIds].sort(), [options.mediumRare, options.fries].sort());
      assert.equal(sentSteak.note, 'no salt, please');
      const sentSatay = posted[0].items.find((l) => l.menuItemId === items.satay);
      assert.equal('optionIds' in sentSatay || 'note' in sentSatay, false, 'a plain line goes out as before');

      const [order] = await server.sessionOrders(table);
      const medium = order.items.find((l) => l.menuItemId === items.steak && l.note);
      assert.equal(medium.note, 'no salt, please');
      assert.equal(medium.quantity, 2);
      assert.equal(medium.unitPrice, 2400);
      assert.deepEqual(
        medium.options.map((o) => [o.optionId, o.groupId, o.name, o.price]),
        [
          [options.mediumRare, groups.doneness, 'Medium rare', 100],
          [options.fries, groups.sides, 'Fries', 300],
        ],
      );
      const rare = order.items.find((l) => l.menuItemId === items.steak && !l.note);
      assert.deepEqual(rare.options.map((o) => o.optionId), [options.rare]);
      assert.equal(order.total, 4800 + 2000 + 900);

      // The table's orders on the page show the choices and the note.
      const mine = guest.locator(`#orders > li[data-order-id="${order.orderId}"]`);
      await mine.waitFor();
      assert.match(await mine.textContent(), /2 × Steak \(Medium rare, Fries\) Note: no salt, please/);

      // ── the kitchen display shows the options and the note ──
      const kitchen = await scene.openKitchen();
      const card = ticket(kitchen, order.orderId, 'placed');
      await card.waitFor();
      const noted = card.locator('li[data-line]', { has: kitchen.locator('.line-note') });
      assert.equal((await noted.locator('.line-note').textContent()).trim(), 'no salt, please');
      assert.deepEqual(
        (await noted.locator('.line-options li[data-option]').allTextContents()).map((x) => x.trim()),
        ['Medium rare', 'Fries'],
      );
      await card.locator(`li[data-option="${options.rare}"]`).waitFor();

      // ── a tracked option at stock 0 is disabled in the sheet, live ──
      await openSheet(guest, items.steak);
      assert.equal(await optionInput(guest, options.fries).isEnabled(), true);
      await server.call('PUT', `/api/v1/shops/${grill.shopId}/inventory/${options.fries}`, { body: { stock: 0 } });
      await guest.locator(`#item-sheet input[data-option-id="${options.fries}"]:disabled`).waitFor();
      const friesLabel = guest.locator(`#item-sheet label[data-option-label="${options.fries}"]`);
      assert.equal(await friesLabel.getAttribute('data-sold-out'), 'true');
      assert.match(await friesLabel.textContent(), /sold out/);
      const menu = await server.call('GET', `/api/v1/shops/${grill.shopId}/menu`);
      const fries = menu.items.find((i) => i.menuItemId === items.steak).optionGroups[1].options[0];
      assert.equal(fries.soldOut, true, 'the server says so too');
      assert.equal(await steak.getAttribute('data-sold-out'), 'false', 'an optional side does not sell the steak out');
      await guest.locator('#sheet-close').click();
      await guest.locator('#item-sheet:not([open])').waitFor({ state: 'attached' });

      // ── the filter ──
      await openFilters(guest);
      assert.equal(await guest.locator('#filter-toggle').getAttribute('aria-expanded'), 'true');
      const all = [items.steak, items.satay, items.salad, items.bread, items.udon];
      assert.deepEqual((await visibleItems(guest)).sort(), [...all].sort());
      await guest.locator('input[data-filter-allergen="beef"]').check();
      await eventually(async () => !(await visibleItems(guest)).includes(items.steak), { what: 'the steak hidden' });
      assert.equal(await steak.getAttribute('data-filtered'), 'true');
      assert.equal(await steak.isVisible(), false);
      assert.deepEqual((await visibleItems(guest)).sort(), all.filter((id) => id !== items.steak).sort());
      assert.equal(await guest.locator('#filter-status').getAttribute('aria-live'), 'polite');
      assert.match(await guest.locator('#filter-status').textContent(), /^Showing 4 of 5 dishes\. Without: Beef\.$/);
      assert.equal(await guest.locator('#filter-clear').isVisible(), true);
      // Wheat leaves out what declares wheat or gluten.
      await guest.locator('input[data-filter-allergen="wheat"]').check();
      await eventually(async () => (await visibleItems(guest)).length === 2, { what: 'two dishes left' });
      assert.deepEqual((await visibleItems(guest)).sort(), [items.satay, items.salad].sort());
      await scene.screenshot(guest, 'guest-filter', { fullPage: true });
      // A tag keeps only what has it.
      await guest.locator('input[data-filter-tag="vegan"]').check();
      await eventually(async () => (await visibleItems(guest)).length === 1, { what: 'only the vegan dish' });
      assert.deepEqual(await visibleItems(guest), [items.salad]);
      assert.match(await guest.locator('#filter-status').textContent(), /Only: Vegan\./);
      // The category links of empty sections go too.
      assert.equal(await guest.locator('#categories a:visible').count(), 1);
      await guest.locator('#filter-clear').click();
      await eventually(async () => (await visibleItems(guest)).length === 5, { what: 'every dish back' });
      assert.equal(await guest.locator('#filter-clear').isVisible(), false);
      assert.match(await guest.locator('#filter-status').textContent(), /Filters cleared/);
      assert.equal(await guest.locator('input[data-filter-allergen="beef"]').isChecked(), false);
    }));

  test('choices that no longer fit are refused (INVALID_OPTIONS), shown, and fixed in the sheet', () =>
    scene.run(async () => {
      const { server } = scene;
      const { items, options, groups } = grill;
      await server.call('PUT', `/api/v1/shops/${grill.shopId}/inventory/${options.fries}`, { body: { stock: 5 } });
      const table = await server.openTable(grill.shopId, 'G2');
      const live = await scene.openGuest(table, { name: 'live-guest' });
      // A second phone at the table whose event stream cannot get through
      // (a flaky network): it will not hear of the change below.
      const flaky = await scene.context(PHONE);
      await flaky.route('**/events**', (route) => route.abort());
      const guest = await scene.visitGuest(table, { context: flaky });
      await guest.locator('#menu-items[aria-busy="false"]').waitFor({ state: 'attached' });

      for (const page of [live, guest]) {
        await openSheet(page, items.steak);
        await optionInput(page, options.wellDone).check();
        await addFromSheet(page);
      }

      // Staff make a side required meanwhile. The phone that hears it
      // (menu.changed) says at once what to change, before anything is sent.
      await editGroup(server, grill, groups.sides, (g) => { g.minChoices = 1; });
      const warned = live.locator(`#cart-lines > li[data-item-id="${items.steak}"] [data-role="warning"]`);
      await eventually(async () => /Sides: choose one\./.test(await warned.textContent()), {
        what: 'the live phone warns of the new rule',
      });
      assert.equal(await live.locator('#confirm').isDisabled(), true);

      // The one that did not hear sends the old cart: refused, shown, fixed.
      await guest.locator('#confirm').click();
      const status = guest.locator('#status[data-state="error"][data-code="INVALID_OPTIONS"]');
      await status.waitFor();
      // First in the server's words, then in the page's once it read the new menu.
      await eventually(async () => /not placed.*Steak: Sides: choose one\./.test(await status.textContent()), {
        what: 'the refusal in the page\'s words',
      });
      assert.deepEqual(await server.sessionOrders(table), [], 'nothing was ordered');
      // The page read the menu again: the line says what to change.
      const line = guest.locator(`#cart-lines > li[data-item-id="${items.steak}"]`);
      await line.locator('[data-role="warning"]').waitFor();
      assert.match(await line.locator('[data-role="warning"]').textContent(), /Sides: choose one\./);
      assert.equal(await guest.locator('#confirm').isDisabled(), true);

      // "Change" opens the sheet on the line; a side, "Update order".
      await line.locator('button[data-action="edit"]').click();
      await guest.locator('#item-sheet[open][data-mode="edit"]').waitFor();
      assert.equal(await optionInput(guest, options.wellDone).isChecked(), true, 'the line\'s choices are there');
      assert.equal((await sheetState(guest)).reason, 'Sides: choose one.');
      await optionInput(guest, options.rice).check();
      assert.equal((await guest.locator('#sheet-add').textContent()).trim(), 'Update order');
      await addFromSheet(guest);
      const lines = await cartLines(guest);
      assert.equal(lines.length, 1, 'the line was changed, not added');
      assert.deepEqual(lines[0].optionIds, [options.wellDone, options.rice].sort());
      assert.equal(lines[0].warning, '');
      await guest.locator('#confirm').click();
      await guest.locator('#status[data-state="success"]').waitFor();
      const [order] = await server.sessionOrders(table);
      assert.deepEqual(order.items[0].options.map((o) => o.optionId), [options.wellDone, options.rice]);
    }));

  test('日本語: the page, the menu and the prices in Japanese (shops with languages)', async (t) => {
    const { server } = scene;
    // Does this server have shop languages? A shop says so with `languages`.
    const probe = await server.call('GET', `/api/v1/shops/${grill.shopId}`);
    if (!Array.isArray(probe.languages)) {
      t.skip('this server has no shop languages yet: GET /api/v1/shops/{id} answers without `languages`');
      return;
    }
    await scene.run(async () => {
      const jp = await setupGrill(server, { name: 'E2E 和グリル', bilingual: true });
      const { items, options } = jp;
      const table = await server.openTable(jp.shopId, 'J1');
      const guest = await scene.openGuest(table, { name: 'guest-en' });

      // An English phone: English first, the switch offers 日本語 in its own words.
      assert.equal(await guest.locator('html').getAttribute('lang'), 'en');
      await guest.locator('#lang-switch').waitFor();
      assert.deepEqual(
        await guest.locator('#lang option').evaluateAll((els) => els.map((o) => [o.value, o.textContent])),
        [['en', 'English'], ['ja', '日本語']],
      );
      const steakName = guest.locator(`.item[data-item-id="${items.steak}"] .item-name`);
      assert.equal((await steakName.textContent()).trim(), 'Steak');

      await guest.locator('#lang').selectOption('ja');
      await guest.locator('html[data-lang-ready="ja"]').waitFor({ state: 'attached' });
      assert.equal(await guest.locator('html').getAttribute('lang'), 'ja');
      assert.equal((await guest.locator('#menu-title').textContent()).trim(), 'メニュー');
      assert.equal((await guest.locator('#cart-title').textContent()).trim(), 'ご注文内容');
      await guest.waitForFunction((id) =>
        document.querySelector(`.item[data-item-id="${id}"] .item-name`)?.textContent.trim() === 'ステーキ', items.steak);
      const steak = guest.locator(`.item[data-item-id="${items.steak}"]`);
      assert.equal((await steak.locator('.price').textContent()).trim(), yen(2000, 'ja'));
      assert.match(yen(2000, 'ja'), /^￥2,000$/);
      assert.match(await steak.locator('li[data-allergen="beef"]').textContent(), /牛肉/);
      assert.equal((await steak.locator('button[data-action="choose"]').textContent()).trim(), '選ぶ');
      assert.equal(await guest.evaluate(() => localStorage.getItem('ordergate.lang')), 'ja');

      await openSheet(guest, items.steak);
      assert.equal((await guest.locator('#sheet-title').textContent()).trim(), 'ステーキ');
      assert.equal((await sheetState(guest)).reason, '焼き加減を1つお選びください。');
      await optionInput(guest, options.mediumRare).check();
      await waitForSheetTotal(guest, yen(2100, 'ja'));
      assert.equal((await guest.locator('#sheet-add').textContent()).trim(), '注文に追加');
      await addFromSheet(guest);
      assert.equal((await guest.locator('#confirm').textContent()).trim(), `注文する・${yen(2100, 'ja')}`);
      await scene.screenshot(guest, 'guest-ja', { fullPage: true });

      // The choice is remembered on this phone.
      await guest.reload();
      await guest.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
      assert.equal(await guest.locator('html').getAttribute('lang'), 'ja');

      // A Japanese phone gets Japanese without choosing.
      const context = await scene.browser.newContext({ ...PHONE, locale: 'ja-JP', timezoneId: 'Asia/Tokyo' });
      const ja = await scene.openGuest(table, { context, name: 'guest-ja' });
      assert.equal(await ja.locator('html').getAttribute('lang'), 'ja');
      assert.equal((await ja.locator(`.item[data-item-id="${items.steak}"] .item-name`).textContent()).trim(), 'ステーキ');
    });
  });
  test('photos: in the list and larger in the sheet (servers with images)', async (t) => {
    const { server } = scene;
    const upload = await uploadImage(server, grill.shopId, await makePng());
    if (upload.status === 404 || upload.status === 405) {
      t.skip(`this server has no images yet: POST /api/v1/shops/{id}/images answered ${upload.status}`);
      return;
    }
    await scene.run(async () => {
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      const { items } = grill;
      await setItemImage(server, grill.shopId, items.steak, upload.body.imageId);
      const table = await server.openTable(grill.shopId, 'P1');
      const guest = await scene.openGuest(table, { name: 'guest-photos' });

      const box = guest.locator(`.item[data-item-id="${items.steak}"] [data-role="photo"]`);
      assert.equal(await box.getAttribute('data-photo'), 'image');
      const img = box.locator('img');
      assert.equal(await img.getAttribute('alt'), 'Steak');
      assert.equal(await img.getAttribute('loading'), 'lazy');
      assert.equal(await img.getAttribute('src'), upload.body.url);
      await guest.waitForFunction((id) => {
        const el = document.querySelector(`.item[data-item-id="${id}"] [data-role="photo"] img`);
        return el?.complete && el.naturalWidth > 0;
      }, items.steak);
      // The box keeps its proportions whatever the image's: 1:1 in the list.
      const size = await box.evaluate((el) => el.getBoundingClientRect().toJSON());
      assert.ok(Math.abs(size.width - size.height) < 1.5, `a square box: ${size.width}×${size.height}`);
      // The others get a stand-in that screen readers skip.
      const plain = guest.locator(`.item[data-item-id="${items.satay}"] [data-role="photo"]`);
      assert.equal(await plain.getAttribute('data-photo'), 'none');
      assert.equal(await plain.locator('.photo-none').getAttribute('aria-hidden'), 'true');
      assert.equal(await plain.locator('img').count(), 0);

      await openSheet(guest, items.steak);
      const big = guest.locator('#sheet-photo img');
      assert.equal(await big.getAttribute('alt'), 'Steak');
      const wide = await guest.locator('#sheet-photo [data-role="photo"]').evaluate((el) => el.getBoundingClientRect().width);
      assert.ok(wide > size.width * 2, `larger in the sheet (${wide} px against ${size.width} px)`);
      await scene.screenshot(guest, 'guest-photo-sheet');
    });
  });
});
