// Menu editor (menu-editor.js): categories, which have no record of their own
// in the catalog (their name is on every item in them): adding one (at the
// end of the menu) and its form (form#menu-category-form): renaming it,
// adding an item to it, deleting it while it is empty.

import { announce, h } from './console.js';
import { focusIn } from './menu-editor-dom.js';
import { nextId } from './menu-editor-state.js';

export function createCategories(ed) {
  const { st, $ } = ed;

  function categoryForm(cat) {
    const cp = `c:${cat.uid}`;
    const titleId = ed.fieldId();
    const title = h('span', { text: ed.displayText(cat.text) || 'New category' });
    const index = st.categories.indexOf(cat);
    return h(
      'form',
      {
        id: 'menu-category-form',
        class: 'menu-form',
        novalidate: true,
        'aria-labelledby': titleId,
        dataset: { categoryUid: cat.uid },
        onsubmit: (event) => event.preventDefault(),
      },
      h('div', { class: 'form-head' }, h('h3', { id: titleId }, h('span', { class: 'visually-hidden', text: 'Category: ' }), title)),
      ed.textFields({
        text: cat.text,
        label: 'Category name',
        field: 'category-name',
        errorPrefix: cp,
        hint: 'Renames it on every item in it.',
        onInput: () => {
          title.textContent = ed.displayText(cat.text) || 'New category';
        },
      }),
      h('p', {
        class: 'hint',
        text: `${cat.items.length === 1 ? '1 item' : `${cat.items.length} items`}. Category ${index + 1} of ${st.categories.length} on the menu: move it with the arrows in the list.`,
      }),
      cat.items.length === 0
        ? h('p', { class: 'hint warn', text: 'An empty category is not saved: add an item to it.' })
        : null,
      h(
        'div',
        { class: 'button-row' },
        h('button', {
          type: 'button',
          class: 'btn btn-primary',
          dataset: { action: 'add-item', key: 'add-item' },
          onclick: () => ed.addItem(cat),
          text: '+ Add an item to this category',
        }),
        cat.items.length === 0
          ? h('button', {
              type: 'button',
              class: 'btn btn-danger',
              dataset: { action: 'delete-category', key: 'delete-category' },
              onclick: () => {
                st.categories = st.categories.filter((c) => c !== cat);
                st.selection = null;
                ed.changed();
                ed.renderAll();
                $('menu-add-category').focus();
              },
              text: 'Delete this empty category',
            })
          : null,
      ),
    );
  }

  $('menu-add-category').addEventListener('click', () => {
    if (!st.loaded) return;
    const cat = { uid: nextId('cat-'), text: ed.newText(), items: [] };
    st.categories.push(cat);
    st.selection = { kind: 'category', uid: cat.uid };
    ed.changed();
    ed.renderAll();
    focusIn('[data-field=category-name]');
    announce('New category at the end of the menu. Name it, then add items to it.');
  });

  return { categoryForm };
}
