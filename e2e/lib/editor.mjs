// What staff do in the staff console's menu editor (/staff/{shopId}#menu),
// through the test hooks listed at the top of web/menu-editor.js, and what
// the server says about the catalog and the shop meanwhile.

/** The staff console, signed in, switched to its menu editor with the catalog loaded. */
export async function openMenuEditor(scene, { context, name = 'menu-editor' } = {}) {
  const page = await scene.openStaff({ context, name });
  await page.locator('#menu-link').click();
  await page.locator('#menu[data-state="ready"]').waitFor();
  return page;
}

/** The form of the item shown in the editor. */
export function itemForm(page) {
  return page.locator('#menu-item-form');
}

/** The outline entry (li) of a saved item. */
export function outlineItem(page, itemId) {
  return page.locator(`#menu-categories li[data-item-id="${itemId}"]`);
}

/** The outline entry (li) of a category, by its name in the default language. */
export function outlineCategory(page, category) {
  return page.locator(`#menu-categories > li[data-category="${category}"]`);
}

/** Shows a saved item's form. */
export async function selectItem(page, itemId) {
  await outlineItem(page, itemId).locator('[data-action="select-item"]').click();
  await page.locator(`#menu-item-form[data-item-id="${itemId}"]`).waitFor();
  return itemForm(page);
}

/** Adds a category at the end of the menu and names it. */
export async function addCategory(page, name) {
  await page.locator('#menu-add-category').click();
  const field = page.locator('#menu-category-form [data-field="category-name"]').first();
  await field.fill(name);
  await outlineCategory(page, name).waitFor();
}

/** Adds an item to a category; resolves to its (new, unsaved) form. */
export async function addItem(page, category) {
  await outlineCategory(page, category).locator('[data-action="add-item"]').click();
  await page.locator('#menu-item-form[data-item-id=""]').waitFor();
  return itemForm(page);
}

/**
 * Adds an option group to the shown item: {name, rule, options: [{name, price}]}
 * (price in major units as a person types it; omitted = no extra charge).
 */
export async function addOptionGroup(page, { name, rule = 'required-one', options }) {
  const form = itemForm(page);
  const before = await form.locator('fieldset[data-group-uid]').count();
  await form.locator('[data-action="add-group"]').click();
  const group = form.locator('fieldset[data-group-uid]').nth(before);
  await group.locator('[data-field="group-name"]').first().fill(name);
  await group.locator('select[data-field="group-rule"]').selectOption(rule);
  for (const [i, option] of options.entries()) {
    if (i > 0) await group.locator('[data-action="add-option"]').click();
    const row = group.locator('li[data-option-uid]').nth(i);
    await row.locator('[data-field="option-name"]').first().fill(option.name);
    if (option.price !== undefined) await row.locator('[data-field="option-price"]').fill(option.price);
  }
  return group;
}

/**
 * Presses Save and waits for its end. Resolves to {kind, text} of
 * #menu-status (ok after a save; error after a refusal).
 */
export async function saveMenu(page) {
  const status = page.locator('#menu-status');
  await page.locator('#menu-save').click();
  await page.locator('#menu:not([data-state="saving"])').waitFor({ state: 'attached' });
  await page.waitForFunction(() => document.getElementById('menu-status').textContent !== 'Saving…');
  return { kind: await status.getAttribute('data-kind'), text: (await status.textContent()).trim() };
}

/** The problem shown next to a field: the text of what its aria-describedby names. */
export function fieldError(field) {
  return field.evaluate((el) => {
    const ids = (el.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    const errors = ids
      .map((id) => document.getElementById(id))
      .filter((e) => e && e.dataset.role === 'field-error');
    return errors.map((e) => ({ path: e.dataset.path, text: e.textContent.trim() }));
  });
}

/** The catalog as the API has it, with its ETag. */
export async function apiCatalog(server, shopId) {
  const res = await server.request('GET', `/api/v1/shops/${shopId}/catalog`);
  if (res.status !== 200) throw new Error(`GET catalog answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { ...res.body, etag: res.headers.get('etag') };
}

/** The guest menu (no auth), optionally in one language. */
export function guestMenu(server, shopId, lang) {
  return server.call('GET', `/api/v1/shops/${shopId}/menu${lang ? `?lang=${encodeURIComponent(lang)}` : ''}`, {
    auth: null,
  });
}

/**
 * What this server build supports of issue 16's later parts, found by asking
 * it: `languages` (the shop carries them) and `images` (the upload endpoint
 * exists: an empty body is refused as an image, not as an unknown route).
 */
export async function serverSupports(server, shopId) {
  const shop = await server.call('GET', `/api/v1/shops/${shopId}`, { auth: null });
  const probe = await server.request('POST', `/api/v1/shops/${shopId}/images`, {
    headers: { 'Content-Type': 'image/png' },
  });
  return {
    languages: Array.isArray(shop.languages),
    images: !(probe.status === 404 && probe.body?.code === 'NOT_FOUND') && probe.status !== 405,
  };
}
