// Menu editor (menu-editor.js): its "Preview as guest" panel, a read-only
// rendering of the menu exactly as guests' phones receive it (GET …/menu):
// categories in order, names, prices, choices with their rules and prices,
// toppings, allergens, tags, sold-out marks and photos; and its dialog
// (#menu-preview-dialog), which reads the saved menu in the language chosen.

import { apiResponse, h, moneyFormatter, problemText } from './console.js';
import { ALLERGEN_NAMES, COMMON_TAGS, langName } from './menu-editor-data.js';

/** The menu renders texts in one language; an object is shown by its first text. */
function asText(v) {
  if (v && typeof v === 'object') return Object.values(v)[0] || '';
  return v ?? '';
}

function ruleText(g) {
  const n = g.options.length;
  if (g.minChoices === 1 && g.maxChoices === 1) return 'choose 1';
  if (g.minChoices === 0 && g.maxChoices === 1) return 'optional, up to 1';
  if (g.minChoices === 0) return g.maxChoices >= n ? 'optional, any' : `optional, up to ${g.maxChoices}`;
  if (g.minChoices === g.maxChoices) return `choose ${g.minChoices}`;
  return `choose ${g.minChoices} to ${g.maxChoices}`;
}

/** The guest menu (GET …/menu) as a list of elements: one section per category. */
export function renderGuestMenu(menu, { currency = 'USD' } = {}) {
  const money = moneyFormatter(menu.currency || currency);
  const byCategory = new Map();
  for (const item of menu.items || []) {
    const c = asText(item.category);
    if (!byCategory.has(c)) byCategory.set(c, []);
    byCategory.get(c).push(item);
  }
  if (!byCategory.size) return [h('p', { class: 'empty', text: 'The menu is empty.' })];
  const out = [];
  if (menu.language) {
    out.push(h('p', { class: 'hint', text: `Language: ${langName(menu.language)} (${menu.language})` }));
  }
  for (const [category, items] of byCategory) {
    out.push(
      h(
        'section',
        { class: 'preview-category', lang: menu.language || null },
        h('h3', { text: category }),
        h('ul', { class: 'preview-items' }, items.map((item) => itemEntry(item, money))),
      ),
    );
  }
  return out;
}

function itemEntry(item, money) {
  const soldOut = Boolean(item.soldOut);
  return h(
    'li',
    {
      class: soldOut ? 'preview-item is-sold-out' : 'preview-item',
      dataset: { itemId: item.menuItemId, soldOut: String(soldOut) },
    },
    item.imageUrl ? h('img', { class: 'preview-photo', src: item.imageUrl, alt: '' }) : null,
    h(
      'div',
      { class: 'preview-body' },
      h(
        'p',
        { class: 'preview-line' },
        h('span', { class: 'preview-name', dataset: { role: 'name' }, text: asText(item.name) }),
        h('span', { class: 'preview-price', dataset: { role: 'price' }, text: money(item.price) }),
      ),
      asText(item.description) ? h('p', { class: 'hint', text: asText(item.description) }) : null,
      soldOut ? h('p', { class: 'badge badge-sold-out', text: 'Sold out' }) : null,
      (item.optionGroups || []).map((g) => groupEntry(g, money)),
      item.toppings && item.toppings.length
        ? h('p', {
            class: 'hint',
            text: `Toppings (up to ${item.maxToppings}): ${item.toppings
              .map((t) => `${asText(t.name)} +${money(t.price)}`)
              .join(', ')}`,
          })
        : null,
      item.allergens && item.allergens.length
        ? h('p', {
            class: 'preview-allergens',
            dataset: { role: 'allergens' },
            text: `Contains: ${item.allergens.map((c) => ALLERGEN_NAMES.get(c) || c).join(', ')}`,
          })
        : null,
      item.tags && item.tags.length
        ? h(
            'p',
            { class: 'preview-tags', dataset: { role: 'tags' } },
            item.tags.map((t) => h('span', { class: 'badge', text: COMMON_TAGS.find((c) => c.tag === t)?.name || t })),
          )
        : null,
    ),
  );
}

function groupEntry(g, money) {
  return h(
    'div',
    { class: 'preview-group', dataset: { groupId: g.groupId } },
    h('p', { class: 'preview-group-name' }, asText(g.name), h('span', { class: 'hint', text: ` · ${ruleText(g)}` })),
    h(
      'ul',
      { class: 'preview-options' },
      g.options.map((o) =>
        h(
          'li',
          { dataset: { optionId: o.optionId } },
          asText(o.name),
          o.price ? ` +${money(o.price)}` : '',
          o.soldOut ? h('span', { class: 'hint', text: ' (sold out)' }) : null,
        ),
      ),
    ),
  );
}

/** The dialog: opened with #menu-preview-open, it shows the saved menu. */
export function createPreview(ed) {
  const { st, $, shopPath } = ed;

  async function openPreview() {
    const dialog = $('menu-preview-dialog');
    const langSelect = $('menu-preview-lang');
    const langBox = $('menu-preview-lang-box');
    langBox.hidden = st.languages.length < 2;
    if (!langSelect.options.length || langSelect.dataset.langs !== st.languages.join(',')) {
      langSelect.replaceChildren(...st.languages.map((l) => h('option', { value: l, text: `${langName(l)} (${l})` })));
      langSelect.dataset.langs = st.languages.join(',');
    }
    $('menu-preview-note').textContent = ed.isDirty()
      ? 'You have unsaved changes: they are not in this preview. Save to show them to guests.'
      : 'This is the saved menu, exactly as guests’ phones receive it.';
    $('menu-preview-note').dataset.kind = ed.isDirty() ? 'warn' : 'info';
    if (!dialog.open) dialog.showModal();
    await loadPreview();
  }

  async function loadPreview() {
    const box = $('menu-preview');
    box.setAttribute('aria-busy', 'true');
    box.replaceChildren(h('p', { class: 'hint', text: 'Loading…' }));
    const lang = st.languages.length > 1 ? $('menu-preview-lang').value : '';
    try {
      const { data: menu } = await apiResponse(`${shopPath}/menu${lang ? `?lang=${encodeURIComponent(lang)}` : ''}`, {
        auth: false,
        retries: 1,
      });
      box.replaceChildren(...renderGuestMenu(menu, { currency: st.currency }));
      box.dataset.catalogVersion = String(menu.catalogVersion ?? '');
    } catch (err) {
      box.replaceChildren(h('p', { class: 'field-error', text: `Could not load the guest menu: ${problemText(err)}` }));
    } finally {
      box.removeAttribute('aria-busy');
    }
  }

  $('menu-preview-open').addEventListener('click', () => {
    if (st.loaded) openPreview();
  });
  $('menu-preview-lang').addEventListener('change', loadPreview);
  $('menu-preview-close').addEventListener('click', () => $('menu-preview-dialog').close());
  $('menu-preview-dialog').addEventListener('close', () => $('menu-preview-open').focus());

  return {};
}
