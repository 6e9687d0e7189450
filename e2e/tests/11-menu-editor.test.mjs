// The staff console's menu editor (issue 16): staff build a dish with a
// required "Doneness" choice, allergens and tags in a new category moved to
// the top, and save; the API's catalog has exactly that, and the guest menu
// shows it. Two editors who loaded the same version: the second save is
// refused with a clear message (412) and Reload shows the first one's
// change. A refused save (422) shows the problem next to its field and saves
// nothing. A retired item comes back under its own id with its stock. The
// shop's languages and photo uploads are covered once the server has them
// (until then those parts check that the server's refusal is shown, then skip).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { PNG } from 'pngjs';

import {
  addCategory,
  addItem,
  addOptionGroup,
  apiCatalog,
  fieldError,
  guestMenu,
  itemForm,
  openMenuEditor,
  outlineCategory,
  outlineItem,
  saveMenu,
  selectItem,
  serverSupports,
} from '../lib/editor.mjs';
import { Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

/** The laptop the editor is made for. */
const LAPTOP = { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 };

describe('menu editor in the staff console', () => {
  let scene;
  let supports;
  /** The dish the first test creates. */
  let steakId;
  before(async () => {
    scene = await Scene.start();
    supports = await serverSupports(scene.server, scene.shop.shopId);
  });
  after(async () => {
    await scene?.close();
  });

  test('staff create a dish with a required choice, allergens and tags; the API and the guest menu have it', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const before = await apiCatalog(server, shop.shopId);
      const page = await openMenuEditor(scene, { context: await scene.context(LAPTOP) });
      assert.equal(await page.locator('#menu').getAttribute('data-version'), String(before.version));
      assert.equal(await page.locator('#inventory').isHidden(), true, 'the editor is a view of its own');

      // A new category, moved to the top of the menu.
      await addCategory(page, 'Mains');
      const form = await addItem(page, 'Mains');
      await form.locator('[data-field="name"]').fill('Steak frites');
      await form.locator('[data-field="description"]').fill('Hanger steak, fries, béarnaise');
      await form.locator('[data-field="price"]').fill('24.00');
      await form.locator('[data-field="station"]').fill('grill');
      await form.locator('input[data-allergen="beef"]').check();
      await form.locator('input[data-allergen="milk"]').check();
      await form.locator('input[data-allergen="egg"]').check();
      await form.locator('input[data-tag="gluten_free"]').check();
      await form.locator('[data-field="other-tags"]').fill('house_special');
      await addOptionGroup(page, {
        name: 'Doneness',
        rule: 'required-one',
        options: [{ name: 'Medium rare' }, { name: 'Well done', price: '1.00' }],
      });
      assert.equal(await page.locator('#menu-dirty').isVisible(), true, 'unsaved changes are shown');
      assert.equal(await page.locator('#menu').getAttribute('data-dirty'), 'true');
      const mains = outlineCategory(page, 'Mains');
      for (let i = 0; i < 4; i += 1) await mains.locator('[data-action="category-up"]').click();
      await page.locator('#menu-categories > li').first().and(mains).waitFor();
      assert.equal(
        await mains.locator('[data-action="category-up"]').evaluate((b) => b === document.activeElement),
        true,
        'the focus stays on the arrow that was pressed',
      );

      const saved = await saveMenu(page);
      assert.equal(saved.kind, 'ok', saved.text);
      assert.equal(await page.locator('#menu').getAttribute('data-dirty'), 'false');
      assert.equal(await page.locator('#menu-dirty').isHidden(), true);

      // The API's catalog: the new dish first, exactly as entered; the rest unchanged.
      const after = await apiCatalog(server, shop.shopId);
      assert.equal(after.version, before.version + 1);
      assert.equal(after.items.length, before.items.length + 1);
      const steak = after.items[0];
      steakId = steak.menuItemId;
      assert.match(steakId, /^[0-9a-f-]{36}$/);
      const [group] = steak.optionGroups;
      assert.deepEqual(steak, {
        menuItemId: steakId,
        name: 'Steak frites',
        description: 'Hanger steak, fries, béarnaise',
        category: 'Mains',
        price: 2400,
        toppingIds: [],
        maxToppings: 0,
        allergens: ['beef', 'milk', 'egg'],
        tags: ['gluten_free', 'house_special'],
        station: 'grill',
        optionGroups: [
          {
            groupId: group.groupId,
            name: 'Doneness',
            minChoices: 1,
            maxChoices: 1,
            options: [
              { optionId: group.options[0].optionId, name: 'Medium rare', price: 0 },
              { optionId: group.options[1].optionId, name: 'Well done', price: 100 },
            ],
          },
        ],
      });
      assert.deepEqual(after.items.slice(1), before.items, 'the other items are as they were');
      assert.deepEqual(after.toppings, before.toppings, 'and so are the toppings');
      assert.equal(await page.locator('#menu').getAttribute('data-version'), String(after.version));
      await itemForm(page).and(page.locator(`[data-item-id="${steakId}"]`)).waitFor();

      // The guest menu: the dish, its category first, its choices priced.
      const menu = await guestMenu(server, shop.shopId);
      assert.equal(menu.items[0].menuItemId, steakId);
      assert.equal(menu.items[0].category, 'Mains');
      assert.deepEqual(
        {
          name: menu.items[0].name,
          price: menu.items[0].price,
          allergens: menu.items[0].allergens,
          tags: menu.items[0].tags,
          soldOut: menu.items[0].soldOut,
          groups: menu.items[0].optionGroups.map((g) => ({
            name: g.name,
            min: g.minChoices,
            max: g.maxChoices,
            options: g.options.map((o) => [o.name, o.price]),
          })),
        },
        {
          name: 'Steak frites',
          price: 2400,
          allergens: ['beef', 'milk', 'egg'],
          tags: ['gluten_free', 'house_special'],
          soldOut: false,
          groups: [{ name: 'Doneness', min: 1, max: 1, options: [['Medium rare', 0], ['Well done', 100]] }],
        },
      );
      assert.equal('station' in menu.items[0], false, 'the station is the kitchen’s only');

      // "Preview as guest" shows that same menu.
      await page.locator('#menu-preview-open').click();
      const preview = page.locator(`#menu-preview li[data-item-id="${steakId}"]`);
      await preview.waitFor();
      assert.equal(await preview.locator('[data-role="name"]').textContent(), 'Steak frites');
      assert.equal(await preview.locator('[data-role="price"]').textContent(), '$24.00');
      assert.match(await preview.locator('[data-role="allergens"]').textContent(), /Beef, Milk, Egg/);
      assert.match(await preview.textContent(), /Well done \+\$1\.00/);
      await page.keyboard.press('Escape');
      await page.locator('#menu-preview-dialog').waitFor({ state: 'hidden' });

      // The inventory of the same console has the new dish (untracked).
      await page.locator(`#inventory-list tr[data-item-id="${steakId}"]`).waitFor({ state: 'attached' });

      await selectItem(page, steakId);
      await scene.screenshot(page, 'menu-editor');
      await scene.screenshot(page, 'menu-editor-full', { fullPage: true });
    }));

  test('two editors on one version: the second save is refused with a clear message; Reload shows the first one’s change', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const first = await openMenuEditor(scene, { name: 'editor-1' });
      const second = await openMenuEditor(scene, { name: 'editor-2' });
      const loaded = await apiCatalog(server, shop.shopId);
      for (const page of [first, second]) {
        assert.equal(await page.locator('#menu').getAttribute('data-version'), String(loaded.version));
      }

      // The first raises the cola's price and saves.
      const colaForm = await selectItem(first, shop.items.cola);
      await colaForm.locator('[data-field="price"]').fill('3.50');
      assert.equal((await saveMenu(first)).kind, 'ok');

      // The second renames the fries and saves: refused.
      const friesForm = await selectItem(second, shop.items.fries);
      await friesForm.locator('[data-field="name"]').fill('Fries (large)');
      const refused = await saveMenu(second);
      assert.equal(refused.kind, 'error');
      const conflict = second.locator('#menu-conflict');
      await conflict.waitFor();
      assert.equal(
        (await second.locator('#menu-conflict-text').textContent()).trim(),
        `Someone else saved the menu (now version ${loaded.version + 1}). Reload it and apply your changes again.`,
      );
      assert.equal(
        await second.locator('#menu-conflict-reload').evaluate((b) => b === document.activeElement),
        true,
        'the focus is on Reload',
      );
      // The unsaved edit is still there, and nothing of it was saved.
      assert.equal(await friesForm.locator('[data-field="name"]').inputValue(), 'Fries (large)');
      assert.equal(await second.locator('#menu').getAttribute('data-dirty'), 'true');
      const now = await apiCatalog(server, shop.shopId);
      assert.equal(now.version, loaded.version + 1);
      assert.equal(now.items.find((i) => i.menuItemId === shop.items.fries).name, 'Fries');
      assert.equal(now.items.find((i) => i.menuItemId === shop.items.cola).price, 350);
      await scene.screenshot(second, 'menu-editor-conflict');

      // Reload: the first one's change, and the edit is gone.
      await second.locator('#menu-conflict-reload').click();
      await second.locator(`#menu[data-state="ready"][data-version="${loaded.version + 1}"]`).waitFor();
      assert.equal(await conflict.isHidden(), true);
      assert.equal(await second.locator('#menu').getAttribute('data-dirty'), 'false');
      const cola = await selectItem(second, shop.items.cola);
      assert.equal(await cola.locator('[data-field="price"]').inputValue(), '3.50');
      const fries = await selectItem(second, shop.items.fries);
      assert.equal(await fries.locator('[data-field="name"]').inputValue(), 'Fries');
      await first.context().close();
      await second.context().close();
    }));

  test('a refused save shows the problem next to its field, focuses it, and saves nothing', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      assert.ok(steakId, 'the first test made the dish');
      const page = await openMenuEditor(scene, { name: 'validation' });
      const before = await apiCatalog(server, shop.shopId);
      const index = before.items.findIndex((i) => i.menuItemId === steakId);

      const form = await selectItem(page, steakId);
      const group = form.locator('fieldset[data-group-uid]').first();
      const option = group.locator('li[data-option-uid]').nth(1).locator('[data-field="option-name"]');
      await option.fill('');
      const refused = await saveMenu(page);
      assert.equal(refused.kind, 'error', refused.text);

      const path = `items[${index}].optionGroups[0].options[1].name`;
      assert.equal(await option.getAttribute('aria-invalid'), 'true');
      assert.deepEqual(await fieldError(option), [{ path, text: 'must not be empty' }]);
      const shown = page.locator(`#menu-item-form [data-role="field-error"][data-path="${path}"]`);
      assert.equal(await shown.isVisible(), true, 'the problem is on the page');
      // Next to its field: in the same option row, just below it.
      const [fieldBox, errorBox] = [await option.boundingBox(), await shown.boundingBox()];
      assert.ok(
        errorBox.y >= fieldBox.y + fieldBox.height - 1 && errorBox.y - (fieldBox.y + fieldBox.height) < 40,
        `the problem is right under the field (${JSON.stringify({ fieldBox, errorBox })})`,
      );
      assert.equal(await option.evaluate((el) => el === document.activeElement), true, 'the field has the focus');
      await page.locator(`#menu-errors-list li[data-path="${path}"]`).waitFor();
      assert.equal(await outlineItem(page, steakId).getAttribute('data-invalid'), 'true');
      await scene.screenshot(page, 'menu-editor-invalid');

      const after = await apiCatalog(server, shop.shopId);
      assert.equal(after.version, before.version, 'nothing was saved');
      assert.deepEqual(after.items, before.items);

      // Leaving with unsaved changes asks first.
      const dialog = new Promise((resolve) => page.once('dialog', resolve));
      await page.close({ runBeforeUnload: true });
      const asked = await dialog;
      assert.equal(asked.type(), 'beforeunload');
      await asked.dismiss();
      assert.equal(page.isClosed(), false, 'staying on the page keeps it open');

      // Fixed, it saves.
      await option.fill('Well done');
      assert.equal(await option.getAttribute('aria-invalid'), null, 'editing the field clears its problem');
      assert.equal((await saveMenu(page)).kind, 'ok');
      const fixed = await apiCatalog(server, shop.shopId);
      assert.equal(fixed.version, before.version + 1);
      assert.deepEqual(fixed.items, before.items, 'the same menu as before the slip');
    }));

  test('a retired item stays restorable; restored, it has its id and its stock again', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      const pie = shop.items.pie;
      await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${pie}`, { body: { stock: 5 } });
      const page = await openMenuEditor(scene, { name: 'retire' });
      const original = (await apiCatalog(server, shop.shopId)).items.find((i) => i.menuItemId === pie);

      const form = await selectItem(page, pie);
      await form.locator('[data-action="retire"]').click();
      const retired = page.locator(`#menu-retired li[data-item-id="${pie}"]`);
      await retired.waitFor();
      assert.equal(await retired.getAttribute('data-saved'), 'false');
      assert.equal(await outlineItem(page, pie).count(), 0, 'off the outline');
      assert.equal(await retired.locator('[data-action="restore"]').evaluate((b) => b === document.activeElement), true);
      assert.equal((await saveMenu(page)).kind, 'ok');

      // Retired: off the catalog, the menu and the inventory.
      const without = await apiCatalog(server, shop.shopId);
      assert.equal(without.items.some((i) => i.menuItemId === pie), false);
      assert.equal((await guestMenu(server, shop.shopId)).items.some((i) => i.menuItemId === pie), false);
      const inventory = await server.call('GET', `/api/v1/shops/${shop.shopId}/inventory`);
      assert.equal(inventory.entries.some((e) => e.itemId === pie), false);
      // Still in the editor's memory, as retired.
      await page.locator(`#menu-retired li[data-item-id="${pie}"][data-saved="true"]`).waitFor();

      // Restore and save: the same id, as it was, with its stock.
      await retired.locator('[data-action="restore"]').click();
      await outlineItem(page, pie).waitFor();
      assert.equal(await retired.count(), 0);
      assert.equal((await saveMenu(page)).kind, 'ok');
      const back = await apiCatalog(server, shop.shopId);
      assert.deepEqual(
        back.items.find((i) => i.menuItemId === pie),
        original,
        'the item is back as it was, under its own id',
      );
      const entry = await eventually(
        async () =>
          (await server.call('GET', `/api/v1/shops/${shop.shopId}/inventory`)).entries.find((e) => e.itemId === pie),
        { what: 'the pie in the inventory' },
      );
      assert.equal(entry.stock, 5, 'its stock came back');
      const menuPie = (await guestMenu(server, shop.shopId)).items.find((i) => i.menuItemId === pie);
      assert.equal(menuPie.stock, 5);
      await page.locator(`#inventory-list tr[data-item-id="${pie}"][data-stock="5"]`).waitFor({ state: 'attached' });
    }));

  test('languages: a Japanese and English name', async (t) => {
    const { server, shop } = scene;
    if (!supports.languages) {
      // Not in this server yet: the editor must show the refusal, not pretend.
      await scene.run(async () => {
        const page = await openMenuEditor(scene, { name: 'languages-refused' });
        await page.locator('#menu-languages summary').click();
        await page.locator('#menu-language-input').fill('ja');
        await page.locator('#menu-language-add').click();
        await page.locator('#menu-language-list li[data-lang="ja"]').waitFor();
        await page.locator('#menu-languages-save').click();
        const message = page.locator('#menu-languages-message[data-kind="error"]');
        await message.waitFor();
        assert.match(await message.textContent(), /not saved.*HTTP (404|405)/);
        const after = await server.call('GET', `/api/v1/shops/${shop.shopId}`, { auth: null });
        assert.equal(after.languages, undefined, 'the shop has no languages: nothing changed');
        assert.equal(await page.locator('#menu-item-form [data-field="name"][data-lang="ja"]').count(), 0);
      });
      t.skip('this server has no shop languages yet (GET /shops/{id} has no `languages`): checked that the refusal of PATCH is shown; the Japanese+English part is skipped');
      return;
    }
    await scene.run(async () => {
      const page = await openMenuEditor(scene, { name: 'languages' });
      await page.locator('#menu-languages summary').click();
      await page.locator('#menu-language-input').fill('ja');
      await page.locator('#menu-language-add').click();
      await page.locator('#menu-language-list li[data-lang="ja"]').waitFor();
      await page.locator('#menu-languages-save').click();
      await page.locator('#menu-languages-message[data-kind="ok"]').waitFor();
      const shopNow = await server.call('GET', `/api/v1/shops/${shop.shopId}`, { auth: null });
      assert.deepEqual(shopNow.languages, ['en', 'ja']);

      const form = await selectItem(page, steakId);
      assert.equal(await form.locator('[data-field="name"][data-lang="en"]').inputValue(), 'Steak frites');
      await form.locator('[data-field="name"][data-lang="ja"]').fill('ステーキ・フリット');
      assert.equal((await saveMenu(page)).kind, 'ok');
      const steak = (await apiCatalog(server, shop.shopId)).items.find((i) => i.menuItemId === steakId);
      assert.deepEqual(steak.name, { en: 'Steak frites', ja: 'ステーキ・フリット' });
      assert.equal(steak.description, 'Hanger steak, fries, béarnaise', 'untouched texts stay as stored');
      const ja = await guestMenu(server, shop.shopId, 'ja');
      assert.equal(ja.items.find((i) => i.menuItemId === steakId).name, 'ステーキ・フリット');
      const en = await guestMenu(server, shop.shopId, 'en');
      assert.equal(en.items.find((i) => i.menuItemId === steakId).name, 'Steak frites');
    });
  });

  test('photo: upload, preview, save', async (t) => {
    const { server, shop } = scene;
    const png = smallPng(64, 48);
    if (!supports.images) {
      await scene.run(async () => {
        const page = await openMenuEditor(scene, { name: 'photo-refused' });
        const form = await selectItem(page, shop.items.burger);
        await form
          .locator('input[data-field="photo"]')
          .setInputFiles({ name: 'burger.png', mimeType: 'image/png', buffer: png });
        const status = form.locator('[data-role="photo-status"][data-kind="error"]');
        await status.waitFor();
        assert.match(await status.textContent(), /not accepted.*HTTP 404 NOT_FOUND/);
        assert.equal(await form.locator('img[data-role="photo-preview"]').count(), 0, 'no preview');
        assert.equal(await page.locator('#menu').getAttribute('data-dirty'), 'false', 'nothing to save');
      });
      t.skip('this server has no image upload yet (POST /shops/{id}/images is 404): checked that its problem is shown; upload, preview and save are skipped');
      return;
    }
    await scene.run(async () => {
      const page = await openMenuEditor(scene, { name: 'photo' });
      const form = await selectItem(page, shop.items.burger);
      const upload = page.waitForResponse((r) => r.url().endsWith('/images') && r.request().method() === 'POST');
      await form
        .locator('input[data-field="photo"]')
        .setInputFiles({ name: 'burger.png', mimeType: 'image/png', buffer: png });
      const res = await upload;
      assert.equal(res.status(), 201);
      assert.equal(res.request().headers()['content-type'], 'image/png');
      const image = await res.json();
      const preview = form.locator(`img[data-role="photo-preview"][data-image-id="${image.imageId}"]`);
      await preview.waitFor();
      assert.equal(await preview.getAttribute('src'), image.url);
      await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await preview.elementHandle());
      assert.equal((await saveMenu(page)).kind, 'ok');
      const burger = (await apiCatalog(server, shop.shopId)).items.find((i) => i.menuItemId === shop.items.burger);
      assert.equal(burger.imageId, image.imageId);
      const menuBurger = (await guestMenu(server, shop.shopId)).items.find((i) => i.menuItemId === shop.items.burger);
      assert.equal(menuBurger.imageUrl, `/images/${image.imageId}`);
      await scene.screenshot(page, 'menu-editor-photo');
    });
  });
});

/** A small PNG: a gradient, so it decodes as a real picture. */
function smallPng(width, height) {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const i = (width * y + x) << 2;
      png.data[i] = (x * 255) / width;
      png.data[i + 1] = (y * 255) / height;
      png.data[i + 2] = 128;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}
