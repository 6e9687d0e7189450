// Menu editor (menu-editor.js): the shop's toppings (form#menu-toppings-form,
// opened with #menu-toppings-open): names and prices, adding one, removing one
// (unticked on every item, retired at the next save) and restoring it.

import { h } from './console.js';
import { focusIn } from './menu-editor-dom.js';

export function createToppings(ed) {
  const { st, $ } = ed;

  function toppingsForm() {
    return h(
      'form',
      {
        id: 'menu-toppings-form',
        class: 'menu-form',
        novalidate: true,
        'aria-labelledby': 'menu-toppings-title',
        onsubmit: (event) => event.preventDefault(),
      },
      h('div', { class: 'form-head' }, h('h3', { id: 'menu-toppings-title', text: 'Toppings' })),
      h('div', { dataset: { errorKey: 'toppings::' } }),
      h('p', {
        class: 'hint',
        text: 'Extras any item may offer (tick them on the item). Removing one retires it at the next save; its stock is kept.',
      }),
      h(
        'ol',
        { class: 'options toppings-list' },
        st.toppings.map((t, ti) => {
          const tp = `t:${t.uid}`;
          const tname = ed.displayText(t.name) || `topping ${ti + 1}`;
          return h(
            'li',
            { class: 'option-row', dataset: { toppingUid: t.uid, toppingId: t.orig?.toppingId || '', errorKey: `${tp}::` } },
            ed.textFields({
              text: t.name,
              label: `Topping ${ti + 1} name`,
              field: 'topping-name',
              errorPrefix: tp,
              labelHidden: ed.textLangs(t.name).length === 1,
            }),
            ed.priceField({
              value: t.priceInput,
              label: `Topping ${ti + 1} price`,
              field: 'topping-price',
              errorKey: `${tp}:price:`,
              optional: true,
              labelHidden: true,
              plus: true,
              onInput: (v) => {
                t.priceInput = v;
              },
            }),
            h(
              'span',
              { class: 'option-tools' },
              h('button', {
                type: 'button',
                class: 'btn btn-small',
                dataset: { action: 'remove-topping', key: `remove-topping:${t.uid}` },
                'aria-label': `Remove ${tname}`,
                onclick: () => {
                  st.toppings.splice(ti, 1);
                  for (const item of st.items.values()) {
                    if (!item.toppingIds.includes(t.uid)) continue;
                    item.toppingIds = item.toppingIds.filter((x) => x !== t.uid);
                    item.maxToppings = Math.min(item.maxToppings, item.toppingIds.length);
                  }
                  if (t.orig?.toppingId) st.retiredToppings.unshift(t);
                  ed.changed();
                  ed.renderAll();
                  $('menu-add-topping')?.focus();
                },
                text: 'Remove',
              }),
            ),
          );
        }),
      ),
      h('button', {
        type: 'button',
        id: 'menu-add-topping',
        class: 'btn',
        dataset: { key: 'add-topping' },
        onclick: () => {
          const t = ed.toppingFrom({});
          t.orig = null;
          t.name = ed.newText();
          t.priceInput = ed.formatMinor(0);
          st.toppings.push(t);
          ed.changed();
          ed.renderAll();
          focusIn(`[data-topping-uid="${t.uid}"] [data-field=topping-name]`);
        },
        text: '+ Add a topping',
      }),
      st.retiredToppings.length
        ? h(
            'div',
            { class: 'retired-toppings' },
            h('h4', { text: 'Removed toppings' }),
            h(
              'ul',
              {},
              st.retiredToppings.map((t) =>
                h(
                  'li',
                  { dataset: { toppingId: t.orig.toppingId } },
                  h('span', { text: ed.displayText(t.name) }),
                  h('span', { class: 'hint', text: t.retiredSaved ? ' retired ' : ' retired when you save ' }),
                  h('button', {
                    type: 'button',
                    class: 'btn btn-small',
                    dataset: { action: 'restore-topping', key: `restore-topping:${t.uid}` },
                    onclick: () => {
                      st.retiredToppings = st.retiredToppings.filter((x) => x !== t);
                      st.toppings.push(t);
                      ed.changed();
                      ed.renderAll();
                    },
                    text: 'Restore',
                  }),
                ),
              ),
            ),
            h('p', { class: 'hint', text: 'A restored topping is not ticked on any item again: tick it where it belongs.' }),
          )
        : null,
    );
  }

  $('menu-toppings-open').addEventListener('click', () => {
    if (!st.loaded) return;
    st.selection = { kind: 'toppings' };
    ed.renderOutline();
    ed.renderDetail();
    $('menu-detail').querySelector('h3')?.scrollIntoView({ block: 'nearest' });
  });

  return { toppingsForm };
}
