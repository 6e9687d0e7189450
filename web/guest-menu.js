// guest-menu.js: the guest page's menu: reading it (with its ETag, in the
// language shown), following stock events, drawing the items (photo,
// allergens, tags, stock, Add or Choose) and the menu filter.

import {
  allergenIcon, tagIcon, isKnownTag, filterChoices, emptyFilter, filterIsEmpty, itemPasses, hasChoices,
} from './menu-rules.js';
import { $, el, announce, photo } from './guest-dom.js';
import {
  state, hooks, t, money, list, itemSoldOut, showNotice, problemText, LOW_STOCK,
} from './guest-page.js';

const FILTER_STORAGE_KEY = 'ordergate.menuFilter';

export async function refreshMenu() {
  if (!state.menuLoader) return undefined;
  if (state.menuLoading) {
    state.menuAgain = true;
    return state.menuLoading;
  }
  state.stockDuringLoad = [];
  state.menuLoading = (async () => {
    try {
      const { menu, changed } = await state.menuLoader.load();
      // A 304 means the server's menu equals the last one read; if events
      // changed our copy since, that copy is what is out of date.
      const adopt = changed || state.menuDirty;
      if (adopt) adoptMenu(menu);
      // Stock events that arrived while the menu was read may be newer.
      const late = state.stockDuringLoad;
      state.stockDuringLoad = [];
      for (const ev of late) applyStock(ev, { render: false, replay: true });
      if (adopt || late.length) {
        if (state.renderedCatalog !== catalogSignature(menu)) renderMenu();
        else updateAvailability();
        hooks.menuChanged();
      }
      if ($('notice').dataset.source === 'menu') {
        $('notice').hidden = true;
        delete $('notice').dataset.source;
      }
    } catch (err) {
      if (!state.menu) {
        $('menu-items').replaceChildren(el('p', { class: 'muted' }, problemText(err)));
        $('menu-items').setAttribute('aria-busy', 'false');
      }
      if (err?.code === 'CATALOG_NOT_READY') {
        showNotice('warning', problemText(err));
        $('notice').dataset.source = 'menu';
      }
    } finally {
      state.menuLoading = null;
      state.stockDuringLoad = [];
    }
    if (state.menuAgain) {
      state.menuAgain = false;
      await refreshMenu();
    }
  })();
  return state.menuLoading;
}

export function catalogSignature(menu) {
  return `${menu.shopId}|${menu.catalogVersion}|${menu.currency}|${menu.language ?? state.menuLoader?.language ?? ''}|${state.lang}`;
}

function adoptMenu(menu) {
  state.menuDirty = false;
  state.menu = menu;
  state.currency = menu.currency;
  if (Array.isArray(menu.languages) && menu.languages.length && !Array.isArray(state.shop?.languages)) {
    state.languages = menu.languages.map(String);
    hooks.languagesChanged?.();
  }
  state.items = new Map(menu.items.map((item) => [item.menuItemId, item]));
  state.toppings = new Map();
  state.options = new Map();
  for (const item of menu.items) {
    item.optionGroups = item.optionGroups ?? [];
    item.allergens = item.allergens ?? [];
    item.tags = item.tags ?? [];
    for (const x of item.toppings ?? []) state.toppings.set(x.toppingId, x);
    for (const group of item.optionGroups) {
      for (const option of group.options ?? []) state.options.set(option.optionId, { option, group, item });
    }
  }
  // The same topping appears under several items: keep one object per id.
  for (const item of menu.items) {
    item.toppings = (item.toppings ?? []).map((x) => state.toppings.get(x.toppingId));
  }
  // A manual 86 that lapses by itself: read the menu again at that moment.
  for (const thing of [...state.items.values(), ...state.toppings.values(), ...[...state.options.values()].map((o) => o.option)]) {
    if (thing.soldOut && thing.soldOutUntil) scheduleExpiry(Date.parse(thing.soldOutUntil));
  }
}

export function applyStock(ev, { render = true, replay = false } = {}) {
  if (!ev || !ev.itemId) return;
  if (state.menuLoading && !replay) state.stockDuringLoad.push(ev);
  const opt = state.options.get(ev.itemId);
  const target = state.items.get(ev.itemId) ?? state.toppings.get(ev.itemId) ?? opt?.option;
  if (target) {
    state.menuDirty = true;
    target.stock = ev.stock ?? null;
    target.soldOut = Boolean(ev.soldOut);
  }
  // An option back in stock may make its item orderable again: the server
  // says so in the menu (the item's soldOut counts its required groups).
  if (opt && !ev.soldOut && opt.item.soldOut && !replay) refreshMenu();
  if (ev.soldOut && ev.soldOutUntil) scheduleExpiry(Date.parse(ev.soldOutUntil));
  if (render) {
    updateAvailability();
    hooks.menuChanged();
  }
}

/** A manual 86 lapses with no event: read the menu again when it does. */
function scheduleExpiry(at) {
  if (Number.isNaN(at) || at >= state.expiryAt) return;
  clearTimeout(state.expiryTimer);
  state.expiryAt = at;
  state.expiryTimer = setTimeout(() => {
    state.expiryAt = Infinity;
    state.expiryTimer = null;
    refreshMenu();
  }, Math.max(0, at - Date.now()) + 1000);
}

export function renderMenu() {
  const menu = state.menu;
  if (!menu) return;
  const focus = focusedMenuControl();
  const byCategory = new Map();
  for (const item of menu.items) {
    if (!byCategory.has(item.category)) byCategory.set(item.category, []);
    byCategory.get(item.category).push(item);
  }
  const withPhotos = menu.items.some((item) => item.imageUrl);
  const chips = [];
  const sections = [];
  let c = 0;
  for (const [category, items] of byCategory) {
    const id = `cat-${c++}`;
    chips.push(el('a', { href: `#${id}`, 'data-category': id }, category));
    sections.push(el('section', { class: 'category', id, 'aria-labelledby': `${id}-title` },
      el('h3', { id: `${id}-title` }, category),
      el('ul', { class: 'items' }, items.map((item) => renderItem(item, { withPhotos })))));
  }
  $('categories').replaceChildren(...chips);
  if (sections.length === 0) sections.push(el('p', { class: 'muted' }, t('menu.empty')));
  $('menu-items').replaceChildren(...sections);
  $('menu-items').setAttribute('aria-busy', 'false');
  state.renderedCatalog = catalogSignature(menu);
  // Ticks on toppings that no longer exist are dropped.
  for (const [itemId, ticked] of state.selected) {
    const item = state.items.get(itemId);
    if (!item) { state.selected.delete(itemId); continue; }
    for (const x of ticked) if (!item.toppings.some((y) => y.toppingId === x)) ticked.delete(x);
  }
  renderFilter();
  updateAvailability();
  restoreMenuFocus(focus);
}

/** An item's allergens (icon + name) and tags (icon + label), or null when it has none. */
export function renderDiet(item) {
  const parts = [];
  if (item.allergens?.length) {
    parts.push(el('div', { class: 'allergens', 'data-role': 'allergens' },
      el('span', { class: 'diet-label' }, t('diet.contains')),
      el('ul', { class: 'diet-list', 'aria-label': t('diet.allergens') },
        item.allergens.map((code) => el('li', { class: 'allergen', 'data-allergen': code },
          el('span', { class: 'diet-icon', 'aria-hidden': 'true' }, allergenIcon(code)),
          t.has(`allergen.${code}`) ? t(`allergen.${code}`) : code)))));
  }
  if (item.tags?.length) {
    parts.push(el('ul', { class: 'tags', 'data-role': 'tags', 'aria-label': t('diet.tags') },
      item.tags.map((tag) => el('li', { class: 'tag', 'data-tag': tag, 'data-known': String(isKnownTag(tag)) },
        tagIcon(tag) ? el('span', { class: 'diet-icon', 'aria-hidden': 'true' }, tagIcon(tag)) : null,
        isKnownTag(tag) ? t(`tag.${tag}`) : tag))));
  }
  return parts.length ? el('div', { class: 'diet' }, parts) : null;
}

function renderItem(item, { withPhotos }) {
  const nameId = `item-${item.menuItemId}-name`;
  const ticked = state.selected.get(item.menuItemId) ?? new Set();
  const choices = hasChoices(item);
  const offered = !choices && item.maxToppings > 0 ? item.toppings : [];
  let toppings = null;
  if (offered.length > 0) {
    const rule = item.maxToppings < offered.length ? t('toppings.upTo', { n: item.maxToppings }) : t('toppings.optional');
    toppings = el('fieldset', { class: 'toppings' },
      el('legend', {}, `${t('toppings.title')} `, el('span', { class: 'muted' }, rule)),
      offered.map((x) => {
        const inputId = `opt-${item.menuItemId}-${x.toppingId}`;
        return el('label', { class: 'check', for: inputId, 'data-topping-label': x.toppingId },
          el('input', {
            type: 'checkbox',
            id: inputId,
            'data-item-id': item.menuItemId,
            'data-topping-id': x.toppingId,
            checked: ticked.has(x.toppingId),
          }),
          el('span', { 'data-role': 'topping-name' }, x.name),
          el('span', { class: 'topping-price' }, t('price.extra', { price: money(x.price) })));
      }));
  }
  const action = choices
    ? el('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'choose', 'data-item-id': item.menuItemId }, t('item.choose'))
    : el('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'add', 'data-item-id': item.menuItemId }, t('item.add'));
  const pic = withPhotos || item.imageUrl ? photo(item.imageUrl, item.name, { className: 'photo-item' }) : null;
  if (pic) pic.dataset.itemId = item.menuItemId;
  return el('li', {
    class: `item${pic ? ' item-with-photo' : ''}`, 'data-item-id': item.menuItemId, 'aria-labelledby': nameId,
    'data-has-choices': String(choices),
  },
  el('div', { class: 'item-main' },
    el('div', { class: 'item-head' },
      el('h4', { class: 'item-name', id: nameId },
        el('button', { type: 'button', class: 'item-open', 'data-action': 'open', 'data-item-id': item.menuItemId }, item.name)),
      el('span', { class: 'price' }, money(item.price))),
    item.description ? el('p', { class: 'item-desc' }, item.description) : null,
    renderDiet(item),
    el('p', { class: 'item-stock', 'data-role': 'stock', hidden: true })),
  pic,
  toppings,
  el('div', { class: 'item-foot' }, action));
}

/** Sold-out marks, stock hints and topping limits, without rebuilding. */
export function updateAvailability() {
  for (const node of document.querySelectorAll('#menu-items .item[data-item-id]')) {
    const item = state.items.get(node.dataset.itemId);
    if (!item) continue;
    const soldOut = itemSoldOut(item);
    node.dataset.soldOut = String(soldOut);
    node.dataset.stock = item.stock == null ? '' : String(item.stock);
    const hint = node.querySelector('[data-role="stock"]');
    if (soldOut) {
      hint.replaceChildren(el('span', { class: 'badge badge-danger' }, t('item.soldOut')));
      hint.hidden = false;
    } else if (item.stock != null && item.stock <= LOW_STOCK) {
      hint.replaceChildren(el('span', { class: 'badge badge-warning' }, t('item.fewLeft', { n: item.stock })));
      hint.hidden = false;
    } else {
      hint.replaceChildren();
      hint.hidden = true;
    }
    const button = node.querySelector('[data-action="add"], [data-action="choose"]');
    const choose = button.dataset.action === 'choose';
    button.disabled = soldOut || state.closed;
    button.textContent = soldOut ? t('item.soldOut') : t(choose ? 'item.choose' : 'item.add');
    button.setAttribute('aria-label', soldOut
      ? t('item.soldOutLabel', { name: item.name })
      : t(choose ? 'item.chooseLabel' : 'item.addLabel', { name: item.name }));

    const ticked = state.selected.get(item.menuItemId) ?? new Set();
    for (const box of node.querySelectorAll('input[data-topping-id]')) {
      const x = state.toppings.get(box.dataset.toppingId);
      if (x?.soldOut && ticked.has(x.toppingId)) ticked.delete(x.toppingId);
      box.checked = ticked.has(box.dataset.toppingId);
    }
    const full = ticked.size >= item.maxToppings;
    for (const box of node.querySelectorAll('input[data-topping-id]')) {
      const x = state.toppings.get(box.dataset.toppingId);
      const unavailable = !x || x.soldOut;
      box.disabled = soldOut || state.closed || unavailable || (full && !box.checked);
      const label = box.closest('label');
      label.dataset.unavailable = String(box.disabled);
      const name = label.querySelector('[data-role="topping-name"]');
      name.textContent = unavailable ? `${x?.name ?? ''} ${t('option.soldOut')}` : (x?.name ?? '');
    }
  }
}

function focusedMenuControl() {
  const a = document.activeElement;
  if (!a || !$('menu-items').contains(a)) return null;
  return { action: a.dataset.action, itemId: a.dataset.itemId, toppingId: a.dataset.toppingId };
}

function restoreMenuFocus(f) {
  if (!f) return;
  let sel = null;
  if (f.toppingId) sel = `input[data-topping-id="${CSS.escape(f.toppingId)}"][data-item-id="${CSS.escape(f.itemId)}"]`;
  else if (f.action && f.itemId) sel = `[data-action="${CSS.escape(f.action)}"][data-item-id="${CSS.escape(f.itemId)}"]`;
  const target = sel && document.querySelector(sel);
  if (target) target.focus();
}

export function onToppingChange(box) {
  const itemId = box.dataset.itemId;
  if (!state.selected.has(itemId)) state.selected.set(itemId, new Set());
  const ticked = state.selected.get(itemId);
  const item = state.items.get(itemId);
  if (box.checked) {
    if (item && ticked.size >= item.maxToppings) {
      box.checked = false;
      announce(t('toppings.limit', { n: item.maxToppings }));
    } else {
      ticked.add(box.dataset.toppingId);
    }
  } else {
    ticked.delete(box.dataset.toppingId);
  }
  updateAvailability();
}

// ── the menu filter ─────────────────────────────────────────────────────

export function loadFilter() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(FILTER_STORAGE_KEY) ?? 'null');
    if (saved) {
      state.filter = {
        exclude: new Set((saved.exclude ?? []).map(String)),
        require: new Set((saved.require ?? []).map(String)),
      };
    }
  } catch { /* no saved filter */ }
}

function saveFilter() {
  try {
    sessionStorage.setItem(FILTER_STORAGE_KEY, JSON.stringify({
      exclude: [...state.filter.exclude], require: [...state.filter.require],
    }));
  } catch { /* kept in memory */ }
}

/** The filter's checkboxes, for what this menu declares. */
function renderFilter() {
  const focused = $('filters').contains(document.activeElement) ? document.activeElement.id : null;
  const choices = filterChoices(state.menu?.items ?? []);
  // Choices the menu no longer has are dropped from the filter.
  for (const code of state.filter.exclude) if (!choices.allergens.includes(code)) state.filter.exclude.delete(code);
  for (const tag of state.filter.require) if (!choices.tags.includes(tag)) state.filter.require.delete(tag);
  const box = (attr, value, checked, icon, text) => {
    const id = `filter-${attr}-${value}`;
    return el('label', { class: 'check filter-choice', for: id },
      el('input', { type: 'checkbox', id, [`data-filter-${attr}`]: value, checked }),
      icon ? el('span', { class: 'diet-icon', 'aria-hidden': 'true' }, icon) : null,
      el('span', {}, text));
  };
  $('filter-allergen-list').replaceChildren(...choices.allergens.map((code) =>
    box('allergen', code, state.filter.exclude.has(code), allergenIcon(code), t.has(`allergen.${code}`) ? t(`allergen.${code}`) : code)));
  $('filter-tag-list').replaceChildren(...choices.tags.map((tag) =>
    box('tag', tag, state.filter.require.has(tag), tagIcon(tag), isKnownTag(tag) ? t(`tag.${tag}`) : tag)));
  $('filter-allergens').hidden = choices.allergens.length === 0;
  $('filter-tags').hidden = choices.tags.length === 0;
  $('filter-bar').hidden = choices.allergens.length === 0 && choices.tags.length === 0;
  if (focused && $(focused)) $(focused).focus();
  applyFilter({ quiet: true });
}

/** Hides the items the filter leaves out, and says what it does. */
function applyFilter({ quiet = false } = {}) {
  const filter = state.filter;
  let shown = 0;
  let total = 0;
  for (const section of document.querySelectorAll('#menu-items section.category')) {
    let visible = 0;
    for (const node of section.querySelectorAll('.item[data-item-id]')) {
      const item = state.items.get(node.dataset.itemId);
      const passes = itemPasses(item, filter);
      node.dataset.filtered = String(!passes);
      node.hidden = !passes;
      total += 1;
      if (passes) { visible += 1; shown += 1; }
    }
    section.hidden = visible === 0;
    const chip = document.querySelector(`#categories a[data-category="${section.id}"]`);
    if (chip) chip.hidden = visible === 0;
  }
  const active = !filterIsEmpty(filter);
  const count = filter.exclude.size + filter.require.size;
  $('filter-count').hidden = !active;
  $('filter-count').textContent = String(count);
  $('filter-toggle').setAttribute('aria-label', active ? t('filter.buttonActive', { n: count }) : t('filter.button'));
  $('filter-clear').hidden = !active;
  $('filter-empty').hidden = !active || shown > 0;
  let text = '';
  if (active) {
    const parts = [t('filter.showing', { shown, total, n: total })];
    if (filter.exclude.size) {
      parts.push(t('filter.without', { list: list([...filter.exclude].map((c) => (t.has(`allergen.${c}`) ? t(`allergen.${c}`) : c))) }));
    }
    if (filter.require.size) {
      parts.push(t('filter.only', { list: list([...filter.require].map((x) => (isKnownTag(x) ? t(`tag.${x}`) : x))) }));
    }
    text = parts.join(' ');
  }
  const status = $('filter-status');
  if (quiet) status.textContent = text;
  else if (status.textContent !== text || !active) status.textContent = text || t('filter.cleared');
}

export function onFilterChange(input) {
  if (input.dataset.filterAllergen) {
    if (input.checked) state.filter.exclude.add(input.dataset.filterAllergen);
    else state.filter.exclude.delete(input.dataset.filterAllergen);
  } else if (input.dataset.filterTag) {
    if (input.checked) state.filter.require.add(input.dataset.filterTag);
    else state.filter.require.delete(input.dataset.filterTag);
  }
  saveFilter();
  applyFilter();
}

export function clearFilter() {
  state.filter = emptyFilter();
  saveFilter();
  for (const input of $('filters').querySelectorAll('input[type="checkbox"]')) input.checked = false;
  applyFilter();
  $('filter-toggle').focus();
}
