// The guest page's menus as restaurants run them: a grill's catalog with
// option groups, allergens and tags (set up through the HTTP API), and what
// a guest does with it on the page (the item sheet, the menu filter, the
// language switch), through the hooks listed at the top of web/guest.js.

import { randomUUID } from 'node:crypto';

/**
 * A grill in yen, set up through the API:
 *   Mains:  Steak ¥2,000 (beef, milk; gluten_free) with
 *             Doneness (required, one of Rare, Medium rare +¥100, Well done)
 *             Sides (optional, up to 2 of Fries +¥300 (tracked, 5 in stock),
 *                    Salad +¥200, Rice)
 *             topping Garlic butter +¥150 (up to 1)
 *           Peanut satay ¥900 (peanut; spicy)
 *   Salads: Garden salad ¥700 (no allergens; vegan)
 *   Bread:  Sourdough ¥300 (gluten; vegetarian)
 *   Noodles: Udon ¥800 (wheat, soy; vegetarian)
 * With `bilingual`, every display text is {en, ja} and the shop offers
 * ["en", "ja"] (servers with shop languages only). Resolves to {shopId,
 * name, currency, items, groups, options, toppings, catalog}.
 */
export async function setupGrill(server, { name = 'E2E Grill', bilingual = false } = {}) {
  const shop = await server.call('POST', '/api/v1/shops', {
    expect: 201,
    body: { name, currency: 'JPY', timezone: 'Asia/Tokyo' },
  });
  if (bilingual) {
    await server.call('PATCH', `/api/v1/shops/${shop.shopId}`, { body: { languages: ['en', 'ja'] } });
  }
  const text = (en, ja) => (bilingual ? { en, ja } : en);
  const items = { steak: randomUUID(), satay: randomUUID(), salad: randomUUID(), bread: randomUUID(), udon: randomUUID() };
  const groups = { doneness: randomUUID(), sides: randomUUID() };
  const options = {
    rare: randomUUID(), mediumRare: randomUUID(), wellDone: randomUUID(),
    fries: randomUUID(), salad: randomUUID(), rice: randomUUID(),
  };
  const toppings = { garlicButter: randomUUID() };
  const catalog = {
    toppings: [{ toppingId: toppings.garlicButter, name: text('Garlic butter', 'ガーリックバター'), price: 150 }],
    items: [
      {
        menuItemId: items.steak,
        name: text('Steak', 'ステーキ'),
        description: text('Grass-fed sirloin, 200 g', '牧草牛サーロイン 200g'),
        category: text('Mains', 'メイン'),
        price: 2000,
        toppingIds: [toppings.garlicButter],
        maxToppings: 1,
        allergens: ['beef', 'milk'],
        tags: ['gluten_free'],
        station: 'grill',
        optionGroups: [
          {
            groupId: groups.doneness,
            name: text('Doneness', '焼き加減'),
            minChoices: 1,
            maxChoices: 1,
            options: [
              { optionId: options.rare, name: text('Rare', 'レア'), price: 0 },
              { optionId: options.mediumRare, name: text('Medium rare', 'ミディアムレア'), price: 100 },
              { optionId: options.wellDone, name: text('Well done', 'ウェルダン'), price: 0 },
            ],
          },
          {
            groupId: groups.sides,
            name: text('Sides', 'サイド'),
            minChoices: 0,
            maxChoices: 2,
            options: [
              { optionId: options.fries, name: text('Fries', 'フライドポテト'), price: 300 },
              { optionId: options.salad, name: text('Salad', 'サラダ'), price: 200 },
              { optionId: options.rice, name: text('Rice', 'ライス'), price: 0 },
            ],
          },
        ],
      },
      {
        menuItemId: items.satay,
        name: text('Peanut satay', 'ピーナッツサテ'),
        category: text('Mains', 'メイン'),
        price: 900,
        allergens: ['peanut'],
        tags: ['spicy'],
      },
      {
        menuItemId: items.salad,
        name: text('Garden salad', 'ガーデンサラダ'),
        category: text('Salads', 'サラダ'),
        price: 700,
        tags: ['vegan'],
      },
      {
        menuItemId: items.bread,
        name: text('Sourdough', 'サワードウ'),
        category: text('Bread', 'パン'),
        price: 300,
        allergens: ['gluten'],
        tags: ['vegetarian'],
      },
      {
        menuItemId: items.udon,
        name: text('Udon', 'うどん'),
        category: text('Noodles', '麺'),
        price: 800,
        allergens: ['wheat', 'soy'],
        tags: ['vegetarian'],
      },
    ],
  };
  await server.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, { body: catalog });
  await server.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${options.fries}`, { body: { stock: 5 } });
  return { shopId: shop.shopId, name: shop.name, currency: 'JPY', items, groups, options, toppings, catalog };
}

/**
 * Changes one option group of the grill's catalog as staff (a new catalog
 * version, the same ids): `change(group)` edits the group in place.
 */
export async function editGroup(server, grill, groupId, change) {
  const res = await server.request('GET', `/api/v1/shops/${grill.shopId}/catalog`);
  const catalog = res.body;
  const group = catalog.items.flatMap((i) => i.optionGroups ?? []).find((g) => g.groupId === groupId);
  change(group);
  await server.call('PUT', `/api/v1/shops/${grill.shopId}/catalog`, {
    headers: { 'If-Match': res.headers.get('etag') },
    body: { toppings: catalog.toppings, items: catalog.items },
  });
}

// ── the item sheet ──────────────────────────────────────────────────────

/** Taps the item's Choose (or its name) and waits for the sheet. */
export async function openSheet(page, itemId, { via = 'choose' } = {}) {
  await page.locator(`#menu-items [data-action="${via}"][data-item-id="${itemId}"]`).click();
  await page.locator(`#item-sheet[open][data-item-id="${itemId}"]`).waitFor();
  return page.locator('#item-sheet');
}

export function optionInput(page, optionId) {
  return page.locator(`#item-sheet input[data-option-id="${optionId}"]`);
}

/** What the sheet shows now: {addDisabled, reason, total, amount, quantity, describedBy}. */
export function sheetState(page) {
  return page.evaluate(() => {
    const add = document.getElementById('sheet-add');
    const reason = document.getElementById('sheet-reason');
    const total = document.getElementById('sheet-total');
    return {
      addDisabled: add.disabled,
      reason: reason.hidden ? '' : reason.textContent.trim(),
      total: total.textContent.trim(),
      amount: Number(total.dataset.amount),
      quantity: Number(document.getElementById('sheet-qty').textContent),
      describedBy: add.getAttribute('aria-describedby'),
    };
  });
}

/** Waits until the sheet's total reads `text`. */
export async function waitForSheetTotal(page, text) {
  await page.waitForFunction((want) => document.getElementById('sheet-total').textContent.trim() === want, text);
}

/** Taps "Add to order" (or "Update order") and waits for the sheet to close. */
export async function addFromSheet(page) {
  await page.locator('#sheet-add').click();
  await page.locator('#item-sheet:not([open])').waitFor({ state: 'attached' });
}

// ── the cart ────────────────────────────────────────────────────────────

/** The cart's lines: [{key, itemId, quantity, optionIds, options, note, total, warning}]. */
export function cartLines(page) {
  return page.locator('#cart-lines > li[data-line-key]').evaluateAll((els) =>
    els.map((li) => ({
      key: li.dataset.lineKey,
      itemId: li.dataset.itemId,
      quantity: Number(li.dataset.quantity),
      optionIds: li.dataset.optionIds ? li.dataset.optionIds.split(',') : [],
      options: li.querySelector('[data-role="options"]')?.textContent.trim() ?? '',
      note: li.querySelector('[data-role="line-note"]')?.textContent.trim() ?? '',
      total: li.querySelector('[data-role="line-total"]')?.textContent.trim() ?? '',
      warning: li.querySelector('[data-role="warning"]')?.textContent.trim() ?? '',
    })),
  );
}

// ── the menu filter ─────────────────────────────────────────────────────

/** Opens the filter panel (if it is not open). */
export async function openFilters(page) {
  const toggle = page.locator('#filter-toggle');
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  await page.locator('#filters').waitFor();
}

/** The ids of the menu items the filter leaves visible. */
export function visibleItems(page) {
  return page.locator('#menu-items .item[data-item-id]').evaluateAll((els) =>
    els.filter((li) => li.dataset.filtered !== 'true' && li.offsetParent !== null).map((li) => li.dataset.itemId),
  );
}

// ── photos ──────────────────────────────────────────────────────────────

/** A small PNG (a two-colour picture), made here: no image files needed. */
export async function makePng(width = 160, height = 120) {
  const { PNG } = await import('pngjs');
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (width * y + x) << 2;
      const warm = (x + y) % 40 < 20;
      png.data[i] = warm ? 200 : 90;
      png.data[i + 1] = warm ? 90 : 60;
      png.data[i + 2] = 40;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

/**
 * POST /api/v1/shops/{shopId}/images with the raw bytes, as staff.
 * Resolves to {status, body} (404 on a server without images).
 */
export async function uploadImage(server, shopId, bytes, contentType = 'image/png') {
  const res = await fetch(server.url(`/api/v1/shops/${shopId}/images`), {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': contentType, Accept: 'application/json' },
    body: bytes,
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = text; }
  return { status: res.status, body };
}

/** Gives catalog item `itemId` the image `imageId` (a new catalog version). */
export async function setItemImage(server, shopId, itemId, imageId) {
  const res = await server.request('GET', `/api/v1/shops/${shopId}/catalog`);
  const catalog = res.body;
  catalog.items.find((i) => i.menuItemId === itemId).imageId = imageId;
  await server.call('PUT', `/api/v1/shops/${shopId}/catalog`, {
    headers: { 'If-Match': res.headers.get('etag') },
    body: { toppings: catalog.toppings, items: catalog.items },
  });
}
