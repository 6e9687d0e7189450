// Issue 16 in one service, the way a restaurant lives it: an izakaya in yen
// that offers English and Japanese has a table seated, the guest's phone
// showing the menu. In the staff console's menu editor (/staff/{id}#menu)
// staff add a steak — names and category in both languages, ¥2,000, a
// required "Doneness" / 「焼き加減」 with two options (one +¥100), a photo
// uploaded and previewed — and save.
//   - The guest's open page gets the steak without a reload, with its photo
//     (the image loads from /images/{id}).
//   - Switched to 日本語: the page's and the dish's texts are Japanese,
//     <html lang="ja">, prices in yen without decimals.
//   - The steak cannot be added before a doneness is chosen (Add disabled,
//     the reason shown and tied to it); +¥100 makes it ¥2,100; a line note
//     「塩少なめ」; the order is placed.
//   - The kitchen display shows the ticket with the choice and the note in
//     the shop's default language (English); the API's order has the
//     option, the note and unitPrice 2100.
// Saves flow-editor.png (1280×800), flow-guest-sheet-ja.png (phone) and
// flow-kitchen.png.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import {
  addCategory, addItem, addOptionGroup, apiCatalog, itemForm, outlineItem, saveMenu, serverSupports,
} from '../lib/editor.mjs';
import {
  fillTexts, imageLoaded, markDocument, openEditorAt, sameDocument, setupIzakaya, staffOrder,
} from '../lib/flow.mjs';
import {
  addFromSheet, cartLines, makePng, openSheet, optionInput, sheetState, waitForSheetTotal,
} from '../lib/guest-menu.mjs';
import { pngSize, ticket } from '../lib/pages.mjs';
import { Scene } from '../lib/scene.mjs';

/** The laptop the editor is made for. */
const LAPTOP = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };
/** How long the open guest page is given to pick up the new dish by itself. */
const LIVE_MS = 5_000;

const yen = (n, locale) => new Intl.NumberFormat(locale, { style: 'currency', currency: 'JPY' }).format(n);

const STEAK = {
  name: { en: 'Steak', ja: 'ステーキ' },
  description: { en: 'Sirloin, 200 g', ja: 'サーロイン 200g' },
  category: { en: 'Mains', ja: 'メイン' },
  doneness: { en: 'Doneness', ja: '焼き加減' },
  rare: { en: 'Rare', ja: 'レア' },
  mediumRare: { en: 'Medium rare', ja: 'ミディアムレア' },
};
const NOTE = '塩少なめ';

describe('issue 16 in one service: from the menu editor to the kitchen', () => {
  let scene;
  let supports;
  before(async () => {
    scene = await Scene.start();
    supports = await serverSupports(scene.server, scene.shop.shopId);
  });
  after(async () => {
    await scene?.close();
  });

  const story = 'staff add a steak with a photo and a required doneness; a guest orders it in Japanese; the kitchen has it';
  test(story, async (t) => {
    if (!supports.languages || !supports.images) {
      const missing = [!supports.languages && 'shop languages', !supports.images && 'images'].filter(Boolean);
      t.skip(`this server has no ${missing.join(' and ')} yet: the whole flow needs both`);
      return;
    }
    await scene.run(async () => {
      const { server } = scene;

      // ── 1. the shop, a seated table, the guest's phone on the menu ──
      const shop = await setupIzakaya(server);
      assert.deepEqual(shop.languages, ['en', 'ja']);
      // The kitchen display and the console are this shop's.
      scene.shop = { ...scene.shop, shopId: shop.shopId, name: shop.name };
      const table = await server.openTable(shop.shopId, 'K3');
      const guest = await scene.openGuest(table);
      const guestDocument = await markDocument(guest);
      assert.equal(await guest.locator('html').getAttribute('lang'), 'en', 'an English phone starts in English');
      await guest.locator(`#menu-items .item[data-item-id="${shop.items.miso}"]`).waitFor();
      assert.equal(await guest.locator('#lang-switch').isVisible(), true, 'two languages: the switch is there');

      // ── 2. staff build the steak in the menu editor ──
      const editor = await openEditorAt(scene, shop, { context: await scene.context(LAPTOP) });
      const loaded = await apiCatalog(server, shop.shopId);
      assert.equal(await editor.locator('#menu').getAttribute('data-version'), String(loaded.version));
      assert.notEqual(await editor.locator('#menu-link').getAttribute('aria-current'), null, 'the editor is shown');

      await addCategory(editor, STEAK.category.en);
      await fillTexts(editor.locator('#menu-category-form'), 'category-name', STEAK.category);
      const form = await addItem(editor, STEAK.category.en);
      await fillTexts(form, 'name', STEAK.name);
      await fillTexts(form, 'description', STEAK.description);
      await form.locator('input[data-field="price"]').fill('2000');
      assert.equal(
        await form.locator('select[data-field="category"] option:checked').textContent(),
        STEAK.category.en,
        'the steak is in the new category',
      );
      const group = await addOptionGroup(editor, {
        name: STEAK.doneness.en,
        rule: 'required-one',
        options: [{ name: STEAK.rare.en }, { name: STEAK.mediumRare.en, price: '100' }],
      });
      await fillTexts(group, 'group-name', STEAK.doneness);
      const optionRows = group.locator('li[data-option-uid]');
      assert.equal(await optionRows.count(), 2);
      await fillTexts(optionRows.nth(0), 'option-name', STEAK.rare);
      await fillTexts(optionRows.nth(1), 'option-name', STEAK.mediumRare);

      // The photo: uploaded as soon as it is picked, previewed, saved with the menu.
      const uploaded = editor.waitForResponse(
        (r) => new URL(r.url()).pathname === `/api/v1/shops/${shop.shopId}/images` && r.request().method() === 'POST',
      );
      await form
        .locator('input[data-field="photo"]')
        .setInputFiles({ name: 'steak.png', mimeType: 'image/png', buffer: await makePng(320, 240) });
      const upload = await uploaded;
      assert.equal(upload.status(), 201, await upload.text());
      const image = await upload.json();
      assert.equal(image.url, `/images/${image.imageId}`);
      const preview = form.locator(`img[data-role="photo-preview"][data-image-id="${image.imageId}"]`);
      await preview.waitFor();
      assert.equal(await preview.getAttribute('src'), image.url);
      const shown = await imageLoaded(editor, preview);
      assert.ok(shown.width > 0, 'the preview shows the picture');
      await form.locator('[data-role="photo-status"][data-kind="ok"]').waitFor();
      assert.equal(await editor.locator('#menu').getAttribute('data-dirty'), 'true', 'not on the menu until saved');

      const saved = await saveMenu(editor);
      assert.equal(saved.kind, 'ok', saved.text);
      const catalog = await apiCatalog(server, shop.shopId);
      assert.equal(catalog.version, loaded.version + 1);
      const steak = catalog.items.find((i) => i.name?.en === STEAK.name.en);
      assert.ok(steak, `the catalog has the steak: ${JSON.stringify(catalog.items.map((i) => i.name))}`);
      const steakId = steak.menuItemId;
      const [doneness] = steak.optionGroups;
      const [rare, mediumRare] = doneness.options;
      assert.deepEqual(
        {
          name: steak.name, description: steak.description, category: steak.category, price: steak.price,
          imageId: steak.imageId, groups: steak.optionGroups.length,
          doneness: { name: doneness.name, min: doneness.minChoices, max: doneness.maxChoices },
          options: doneness.options.map((o) => [o.name, o.price]),
        },
        {
          name: STEAK.name, description: STEAK.description, category: STEAK.category, price: 2000,
          imageId: image.imageId, groups: 1,
          doneness: { name: STEAK.doneness, min: 1, max: 1 },
          options: [[STEAK.rare, 0], [STEAK.mediumRare, 100]],
        },
      );
      assert.deepEqual(
        catalog.items.filter((i) => i.menuItemId !== steakId).map((i) => i.menuItemId).sort(),
        Object.values(shop.items).sort(),
        'the rest of the menu is still there',
      );
      await itemForm(editor).and(editor.locator(`[data-item-id="${steakId}"]`)).waitFor();
      await outlineItem(editor, steakId).waitFor();
      await form.locator(`img[data-role="photo-preview"][data-image-id="${image.imageId}"]`).waitFor();
      const editorShot = await scene.screenshot(editor, 'flow-editor');
      assert.deepEqual(pngSize(await readFile(editorShot)), { width: 1280, height: 800 });

      // ── 3. the open guest page gets the steak, with its photo, without a reload ──
      const steakRow = guest.locator(`#menu-items .item[data-item-id="${steakId}"]`);
      // The save wrote menu.changed to the shop's log; the page's stream
      // carries it and the page reads its menu again.
      await steakRow.waitFor({ state: 'attached', timeout: LIVE_MS });
      await steakRow.waitFor();
      assert.equal(await sameDocument(guest, guestDocument), true, 'the guest page was not reloaded');
      assert.equal((await steakRow.locator('button[data-action="open"]').textContent()).trim(), STEAK.name.en);
      assert.equal(await steakRow.getAttribute('data-has-choices'), 'true');
      await steakRow.getByText(yen(2000, 'en-US'), { exact: true }).waitFor();
      const photoBox = steakRow.locator(`[data-role="photo"][data-item-id="${steakId}"]`);
      assert.equal(await photoBox.getAttribute('data-photo'), 'image');
      const photo = photoBox.locator('img');
      assert.equal(await photo.getAttribute('src'), `/images/${image.imageId}`);
      assert.equal(await photo.getAttribute('alt'), STEAK.name.en);
      const picture = await imageLoaded(guest, photo);
      assert.ok(picture.width > 0, 'the photo loads');
      assert.equal(new URL(picture.currentSrc).pathname, `/images/${image.imageId}`);
      assert.equal(await photoBox.getAttribute('data-photo'), 'image', 'it loaded: no stand-in');

      // ── 4. the guest switches to 日本語 ──
      await guest.locator('#lang').selectOption('ja');
      await guest.locator('html[data-lang-ready="ja"]').waitFor({ state: 'attached' });
      assert.equal(await guest.locator('html').getAttribute('lang'), 'ja');
      // The page's own headings (they have no hook of their own: read by role).
      await guest.getByRole('heading', { level: 2, name: 'メニュー', exact: true }).waitFor();
      await guest.getByRole('heading', { level: 2, name: 'ご注文内容', exact: true }).waitFor();
      assert.equal(await guest.getByRole('heading', { level: 2, name: 'Menu', exact: true }).count(), 0);
      const openSteak = steakRow.locator('button[data-action="open"]');
      await guest.waitForFunction((el) => el.textContent.trim() === 'ステーキ', await openSteak.elementHandle());
      assert.equal((await steakRow.locator('button[data-action="choose"]').textContent()).trim(), '選ぶ');
      assert.equal(await photo.getAttribute('alt'), STEAK.name.ja);
      // Its category, by the link to its section.
      const section = await steakRow.evaluate((li) => li.closest('section[id^="cat-"]').id);
      assert.equal((await guest.locator(`#categories a[href="#${section}"]`).textContent()).trim(), STEAK.category.ja);
      // Yen in Japanese: no decimals.
      const ja2000 = yen(2000, 'ja');
      assert.match(ja2000, /^[¥￥]2,000$/);
      await steakRow.getByText(ja2000, { exact: true }).waitFor();
      await guest
        .locator(`#menu-items .item[data-item-id="${shop.items.miso}"]`)
        .getByText(yen(400, 'ja'), { exact: true })
        .waitFor();
      assert.equal(await sameDocument(guest, guestDocument), true, 'switching the language does not reload');

      // ── 5. the sheet: no doneness, no Add; +¥100; a note; the order ──
      await openSheet(guest, steakId);
      assert.equal((await guest.locator('#sheet-title').textContent()).trim(), STEAK.name.ja);
      assert.equal((await guest.locator('#sheet-price').textContent()).trim(), ja2000);
      assert.equal((await guest.locator('#sheet-desc').textContent()).trim(), STEAK.description.ja);
      const group1 = guest.locator(`#item-sheet fieldset[data-group-id="${doneness.groupId}"]`);
      assert.equal(await group1.getAttribute('data-required'), 'true');
      await guest.getByRole('group', { name: new RegExp(STEAK.doneness.ja) }).and(group1).waitFor();
      // Radios, labelled in Japanese; the extra charge in yen.
      const choicesShown = await group1.locator('input[data-option-id]').evaluateAll((els) =>
        els.map((e) => [e.type, e.dataset.optionId, [...e.labels].map((l) => l.textContent.replace(/\s+/g, '')).join('')]),
      );
      assert.deepEqual(choicesShown, [
        ['radio', rare.optionId, STEAK.rare.ja],
        ['radio', mediumRare.optionId, `${STEAK.mediumRare.ja}+${yen(100, 'ja')}`],
      ]);

      let s = await sheetState(guest);
      assert.equal(s.addDisabled, true, 'Add is disabled until a doneness is chosen');
      assert.equal(s.reason, `${STEAK.doneness.ja}を1つお選びください。`);
      assert.equal(s.describedBy, 'sheet-reason', 'the reason is tied to the button');
      // Shown, on the phone's screen, next to the button, once the sheet
      // has slid up (it rises 2rem as it opens).
      await guest.locator('#item-sheet').evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
      const phone = guest.viewportSize();
      for (const id of ['sheet-reason', 'sheet-add']) {
        const box = await guest.locator(`#${id}`).boundingBox();
        const onScreen = box && box.y >= 0 && box.y + box.height <= phone.height;
        assert.ok(onScreen, `#${id} is on the phone's screen: ${JSON.stringify(box)}`);
      }
      assert.equal(s.total, ja2000);
      // A tap on it anyway does nothing.
      await guest.locator('#sheet-add').click({ force: true });
      assert.equal(await guest.locator('#item-sheet').getAttribute('open'), '', 'the sheet stays open');
      assert.deepEqual(await cartLines(guest), [], 'nothing went into the cart');
      await guest.locator('#sheet-note').fill(NOTE);
      await scene.screenshot(guest, 'flow-guest-sheet-ja');

      await optionInput(guest, mediumRare.optionId).check();
      await waitForSheetTotal(guest, yen(2100, 'ja'));
      s = await sheetState(guest);
      assert.equal(s.addDisabled, false);
      assert.equal(s.reason, '');
      assert.equal(s.amount, 2100);
      await addFromSheet(guest);
      const lines = await cartLines(guest);
      assert.equal(lines.length, 1);
      assert.equal(lines[0].itemId, steakId);
      assert.deepEqual(lines[0].optionIds, [mediumRare.optionId]);
      assert.equal(lines[0].options, STEAK.mediumRare.ja);
      assert.match(lines[0].note, new RegExp(NOTE));
      assert.equal(lines[0].total, yen(2100, 'ja'));
      assert.equal((await guest.locator('#confirm').textContent()).trim(), `注文する・${yen(2100, 'ja')}`);

      const posted = guest.waitForRequest(
        (r) => r.method() === 'POST' && new URL(r.url()).pathname === `/api/v1/sessions/${table.sessionId}/orders`,
      );
      await guest.locator('#confirm').click();
      const sent = (await posted).postDataJSON();
      assert.equal(sent.items.length, 1);
      assert.equal(sent.items[0].menuItemId, steakId);
      assert.deepEqual(sent.items[0].optionIds, [mediumRare.optionId], 'the choice goes out');
      assert.equal(sent.items[0].note, NOTE, 'and the note');
      const status = guest.locator('#status[data-state="success"]');
      await status.waitFor();
      const ticketNumber = Number(await status.getAttribute('data-ticket'));
      assert.match((await status.textContent()).trim(), new RegExp(`注文番号 ${ticketNumber}`));
      const mine = guest.locator(`#orders > li[data-order-id][data-ticket="${ticketNumber}"]`);
      await mine.waitFor();
      const orderId = await mine.getAttribute('data-order-id');

      // ── 6. the kitchen and the API ──
      const order = await staffOrder(server, orderId);
      assert.equal(order.tableLabel, 'K3');
      assert.equal(order.items.length, 1);
      const [line] = order.items;
      assert.deepEqual(
        {
          menuItemId: line.menuItemId, name: line.name, quantity: line.quantity, unitPrice: line.unitPrice,
          note: line.note, options: line.options,
        },
        {
          menuItemId: steakId, name: STEAK.name.en, quantity: 1, unitPrice: 2100, note: NOTE,
          options: [
            { optionId: mediumRare.optionId, groupId: doneness.groupId, name: STEAK.mediumRare.en, price: 100 },
          ],
        },
        'names in the shop’s default language',
      );
      assert.equal(order.total, 2100);

      const kitchen = await scene.openKitchen();
      const card = ticket(kitchen, orderId, 'placed');
      await card.waitFor();
      assert.equal(await card.getAttribute('data-ticket-number'), String(ticketNumber));
      assert.equal(await card.getAttribute('data-table'), 'K3');
      const kitchenLine = card.locator('li[data-line]');
      assert.equal(await kitchenLine.count(), 1);
      assert.equal((await kitchenLine.locator('.line-name').textContent()).trim(), STEAK.name.en);
      // The choices have no hook of their own in kitchen.js's list: read by their list's name.
      const choices = kitchenLine.getByRole('list', { name: `Choices for ${STEAK.name.en}` });
      assert.deepEqual(
        (await choices.getByRole('listitem').allTextContents()).map((x) => x.trim()),
        [STEAK.mediumRare.en],
      );
      assert.equal((await kitchenLine.locator('.line-note').textContent()).trim(), NOTE);
      await scene.screenshot(kitchen, 'flow-kitchen');
    });
  });
});
