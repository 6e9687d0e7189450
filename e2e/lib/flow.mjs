// The whole of issue 16 as a restaurant lives it (tests/12-menu-to-kitchen):
// a bilingual shop in yen set up through the HTTP API, the staff console
// opened straight at its menu editor, texts typed in every language the
// shop has, and what a guest's phone does when it comes back to the page.
// Hooks are the ones listed at the top of web/menu-editor.js, web/staff.js,
// web/guest.js and web/kitchen.js. Every wait has a deadline (the contexts'
// default, WAIT_MS, unless given).

import { randomUUID } from 'node:crypto';

/**
 * A small izakaya in yen that offers English and Japanese (English first:
 * the default, so the kitchen's names are English), set up through the API:
 *   Soups / 汁物:   Miso soup / 味噌汁 ¥400
 *   Drinks / 飲み物: Green tea / 緑茶 ¥300
 * Resolves to {shopId, name, currency, languages, items: {miso, tea}}.
 */
export async function setupIzakaya(server, { name = 'E2E Izakaya' } = {}) {
  const shop = await server.call('POST', '/api/v1/shops', {
    expect: 201,
    body: { name, currency: 'JPY', timezone: 'Asia/Tokyo' },
  });
  const patched = await server.call('PATCH', `/api/v1/shops/${shop.shopId}`, { body: { languages: ['en', 'ja'] } });
  const items = { miso: randomUUID(), tea: randomUUID() };
  await server.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, {
    body: {
      toppings: [],
      items: [
        {
          menuItemId: items.miso,
          name: { en: 'Miso soup', ja: '味噌汁' },
          category: { en: 'Soups', ja: '汁物' },
          price: 400,
        },
        {
          menuItemId: items.tea,
          name: { en: 'Green tea', ja: '緑茶' },
          category: { en: 'Drinks', ja: '飲み物' },
          price: 300,
        },
      ],
    },
  });
  return { shopId: shop.shopId, name: shop.name, currency: 'JPY', languages: patched.languages, items };
}

/**
 * The staff console opened at `/staff/{shopId}#menu` (a bookmark of the
 * editor), signed in, the editor showing the loaded catalog.
 */
export async function openEditorAt(scene, shop, { context, name = 'menu-editor' } = {}) {
  const page = await scene.page(context, name);
  await page.goto(scene.server.url(`/staff/${shop.shopId}#menu`));
  await scene.signIn(page);
  await page.locator('#shop-name', { hasText: shop.name }).waitFor();
  await page.locator('#menu[data-state="ready"]').waitFor();
  return page;
}

/**
 * Types one display text in every language: `texts` is {en: '…', ja: '…'};
 * `scope` holds the [data-field=<field>][data-lang=<tag>] inputs.
 */
export async function fillTexts(scope, field, texts) {
  for (const [lang, text] of Object.entries(texts)) {
    await scope.locator(`[data-field="${field}"][data-lang="${lang}"]`).fill(text);
  }
}

/**
 * Marks the page's document, so that `sameDocument(page)` can tell later
 * that it was never reloaded or navigated away from.
 */
export async function markDocument(page) {
  const mark = randomUUID();
  await page.evaluate((m) => {
    window.__e2eDocument = m;
  }, mark);
  return mark;
}

export function sameDocument(page, mark) {
  return page.evaluate((m) => window.__e2eDocument === m, mark);
}

/** Waits until the image `img` (a locator) has loaded a picture; resolves to its natural size. */
export async function imageLoaded(page, img) {
  await img.scrollIntoViewIfNeeded();
  await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
  return img.evaluate((el) => ({ width: el.naturalWidth, height: el.naturalHeight, currentSrc: el.currentSrc }));
}

/** One order as staff read it: GET /api/v1/orders/{orderId}. */
export function staffOrder(server, orderId) {
  return server.call('GET', `/api/v1/orders/${orderId}`);
}
