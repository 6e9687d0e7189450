// Menu editor (menu-editor.js): the outline on the left: the categories in
// menu order with their items (#menu-categories), the toppings entry and the
// retired items (#menu-retired); selecting, moving categories and items up
// and down, and its cheap refresh of names, prices and flags while typing.
// One click handler on #menu-outline serves all its buttons.

import { announce, h } from './console.js';
import { focusedKey, move, moveButton, restoreFocus } from './menu-editor-dom.js';

export function createOutline(ed) {
  const { st, $ } = ed;

  function renderOutline() {
    const focusKey = focusedKey($('menu-outline'));
    const invalid = new Set(st.errors.map((e) => e.target && e.target.kind === 'item' && e.target.uid).filter(Boolean));
    const invalidCats = new Set(
      st.errors.map((e) => e.target && e.target.kind === 'category' && e.target.uid).filter(Boolean),
    );
    const list = $('menu-categories');
    list.replaceChildren(
      ...st.categories.map((cat, ci) => {
        const name = ed.displayText(cat.text) || 'New category';
        const selected = st.selection?.kind === 'category' && st.selection.uid === cat.uid;
        return h(
          'li',
          {
            class: 'outline-category',
            dataset: {
              categoryUid: cat.uid,
              category: ed.displayText(cat.text),
              invalid: String(invalidCats.has(cat.uid)),
            },
          },
          h(
            'div',
            { class: 'outline-row outline-category-row' },
            h(
              'button',
              {
                type: 'button',
                class: 'outline-select outline-category-name',
                dataset: { action: 'select-category', key: `sel-cat:${cat.uid}` },
                'aria-current': selected ? 'true' : null,
              },
              name,
              h('span', { class: 'visually-hidden', text: ` (category, ${cat.items.length} items)` }),
              invalidCats.has(cat.uid) ? h('span', { class: 'flag flag-error', text: 'Problem' }) : null,
            ),
            h(
              'span',
              { class: 'outline-moves' },
              moveButton('category-up', `Move category ${name} up`, ci === 0, `cat-up:${cat.uid}`),
              moveButton(
                'category-down',
                `Move category ${name} down`,
                ci === st.categories.length - 1,
                `cat-down:${cat.uid}`,
              ),
            ),
          ),
          h(
            'ol',
            { class: 'outline-items', 'aria-label': `Items in ${name}` },
            cat.items.map((uid, ii) => {
              const item = st.items.get(uid);
              const iname = ed.displayText(item.name) || 'New item';
              const price = ed.parseMajor(item.priceInput);
              const current = st.selection?.kind === 'item' && st.selection.uid === uid;
              return h(
                'li',
                {
                  class: 'outline-item',
                  dataset: {
                    uid,
                    itemId: item.orig?.menuItemId || '',
                    changed: String(ed.itemChanged(uid)),
                    invalid: String(invalid.has(uid)),
                  },
                },
                h(
                  'div',
                  { class: 'outline-row' },
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'outline-select',
                      dataset: { action: 'select-item', key: `sel-item:${uid}` },
                      'aria-current': current ? 'true' : null,
                    },
                    h('span', { class: 'outline-name', dataset: { role: 'name' }, text: iname }),
                    h('span', { class: 'outline-price', text: price === null ? '' : st.money(price) }),
                    h('span', { class: 'flag flag-changed', dataset: { role: 'changed' }, text: 'Edited' }),
                    invalid.has(uid) ? h('span', { class: 'flag flag-error', text: 'Problem' }) : null,
                    item.orig ? null : h('span', { class: 'flag flag-new', text: 'New' }),
                  ),
                  h(
                    'span',
                    { class: 'outline-moves' },
                    moveButton('item-up', `Move ${iname} up`, ii === 0, `item-up:${uid}`),
                    moveButton('item-down', `Move ${iname} down`, ii === cat.items.length - 1, `item-down:${uid}`),
                  ),
                ),
              );
            }),
            h(
              'li',
              { class: 'outline-add' },
              h('button', {
                type: 'button',
                class: 'btn btn-small btn-quiet',
                dataset: { action: 'add-item', key: `add-item:${cat.uid}` },
                'aria-label': `Add an item to ${name}`,
                text: '+ Add item',
              }),
            ),
          ),
        );
      }),
    );
    $('menu-empty').hidden = st.categories.length > 0;
    const tcount = $('menu-toppings-count');
    tcount.textContent = String(st.toppings.length);
    $('menu-toppings-open').setAttribute('aria-current', st.selection?.kind === 'toppings' ? 'true' : 'false');
    // Retired items.
    const retired = $('menu-retired');
    retired.replaceChildren(
      ...st.retired.map((uid) => {
        const item = st.items.get(uid);
        const iname = ed.displayText(item.name) || 'Item';
        return h(
          'li',
          { dataset: { uid, itemId: item.orig?.menuItemId || '', saved: String(item.retiredSaved) } },
          h('span', { class: 'retired-name', text: iname }),
          h('span', {
            class: 'hint',
            text: item.retiredSaved ? 'retired' : 'retired when you save',
          }),
          h('button', {
            type: 'button',
            class: 'btn btn-small',
            dataset: { action: 'restore', key: `restore:${uid}` },
            'aria-label': `Restore ${iname}`,
            text: 'Restore',
          }),
        );
      }),
    );
    $('menu-retired-box').hidden = st.retired.length === 0;
    restoreFocus($('menu-outline'), focusKey);
  }

  /** Cheap refresh of the outline's flags and names while typing. */
  function updateOutlineFlags() {
    for (const li of $('menu-categories').querySelectorAll('li[data-uid]')) {
      const item = st.items.get(li.dataset.uid);
      if (!item) continue;
      li.dataset.changed = String(ed.itemChanged(li.dataset.uid));
      li.querySelector('[data-role=name]').textContent = ed.displayText(item.name) || 'New item';
      const price = ed.parseMajor(item.priceInput);
      li.querySelector('.outline-price').textContent = price === null ? '' : st.money(price);
    }
    for (const li of $('menu-categories').querySelectorAll(':scope > li[data-category-uid]')) {
      const cat = st.categories.find((c) => c.uid === li.dataset.categoryUid);
      if (!cat) continue;
      li.dataset.category = ed.displayText(cat.text);
      const btn = li.querySelector('[data-action=select-category]');
      btn.firstChild.textContent = ed.displayText(cat.text) || 'New category';
    }
  }

  $('menu-outline').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button || button.getAttribute('aria-disabled') === 'true') return;
    const catLi = button.closest('li[data-category-uid]');
    const cat = catLi && st.categories.find((c) => c.uid === catLi.dataset.categoryUid);
    const itemLi = button.closest('li[data-uid]');
    const uid = itemLi && itemLi.dataset.uid;
    switch (button.dataset.action) {
      case 'select-category':
        st.selection = { kind: 'category', uid: cat.uid };
        renderOutline();
        ed.renderDetail();
        revealDetail();
        break;
      case 'select-item':
        st.selection = { kind: 'item', uid };
        renderOutline();
        ed.renderDetail();
        revealDetail();
        break;
      case 'category-up':
      case 'category-down': {
        const i = st.categories.indexOf(cat);
        if (move(st.categories, i, button.dataset.action === 'category-up' ? -1 : 1)) {
          ed.changed();
          renderOutline();
          if (st.selection?.kind === 'category') ed.renderDetail();
          announce(`${ed.displayText(cat.text)} is now category ${st.categories.indexOf(cat) + 1} of ${st.categories.length}.`);
        }
        break;
      }
      case 'item-up':
      case 'item-down': {
        const i = cat.items.indexOf(uid);
        if (move(cat.items, i, button.dataset.action === 'item-up' ? -1 : 1)) {
          ed.changed();
          renderOutline();
          announce(
            `${ed.displayText(st.items.get(uid).name)} is now item ${cat.items.indexOf(uid) + 1} of ${cat.items.length} in ${ed.displayText(cat.text)}.`,
          );
        }
        break;
      }
      case 'add-item':
        ed.addItem(cat);
        break;
      case 'restore':
        ed.restoreItem(uid);
        break;
      default:
        break;
    }
  });

  /** In one column (a tablet upright) the form is below the list: go to it. */
  function revealDetail() {
    if (!window.matchMedia('(max-width: 899px)').matches) return;
    $('menu-detail').scrollIntoView({ block: 'start' });
  }

  return { renderOutline, updateOutlineFlags };
}
