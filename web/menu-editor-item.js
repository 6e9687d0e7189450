// Menu editor (menu-editor.js): the item form (form#menu-item-form): name,
// description, category, price, station, allergens, tags and the toppings
// offered, and its Retire / Remove button. The photo and the option groups
// are parts of it with more behaviour of their own (menu-editor-photo.js,
// menu-editor-groups.js).

import { announce, h } from './console.js';
import { ALLERGEN_NAMES, ALLERGENS, COMMON_TAG_SET, COMMON_TAGS } from './menu-editor-data.js';

export function createItemForm(ed) {
  const { st } = ed;

  function itemForm(item) {
    const cat = ed.categoryOf(item.uid);
    const p = `i:${item.uid}`;
    const titleId = ed.fieldId();
    const title = h('span', { dataset: { role: 'title' }, text: ed.displayText(item.name) || 'New item' });
    const form = h(
      'form',
      {
        id: 'menu-item-form',
        class: 'menu-form',
        novalidate: true,
        'aria-labelledby': titleId,
        dataset: { uid: item.uid, itemId: item.orig?.menuItemId || '' },
        onsubmit: (event) => event.preventDefault(),
      },
      h(
        'div',
        { class: 'form-head' },
        h('h3', { id: titleId }, h('span', { class: 'visually-hidden', text: 'Edit item: ' }), title),
        item.orig?.menuItemId
          ? h('p', { class: 'hint mono', title: 'menuItemId', text: `id ${item.orig.menuItemId}` })
          : h('p', { class: 'hint', text: 'New: gets its id when saved.' }),
      ),
      h('div', { class: 'item-level-errors', dataset: { errorKey: `${p}::` } }),
      h(
        'div',
        { class: 'form-grid' },
        h(
          'div',
          { class: 'form-col' },
          ed.textFields({
            text: item.name,
            label: 'Name',
            field: 'name',
            errorPrefix: p,
            onInput: () => {
              title.textContent = ed.displayText(item.name) || 'New item';
            },
          }),
          ed.textFields({
            text: item.description,
            label: 'Description',
            field: 'description',
            errorPrefix: p,
            multiline: true,
          }),
        ),
        h(
          'div',
          { class: 'form-col' },
          categorySelect(item, cat, p),
          ed.priceField({
            value: item.priceInput,
            label: 'Price',
            field: 'price',
            errorKey: `${p}:price:`,
            onInput: (v) => {
              item.priceInput = v;
            },
          }),
          stationField(item, p),
        ),
      ),
      ed.photoField(item, p),
      allergenFields(item, p),
      tagFields(item, p),
      toppingFields(item, p),
      ed.groupFields(item, p),
      h(
        'div',
        { class: 'form-foot' },
        item.orig?.menuItemId
          ? h(
              'div',
              { class: 'retire-box' },
              h('button', {
                type: 'button',
                class: 'btn btn-danger',
                dataset: { action: 'retire', key: 'retire' },
                onclick: () => ed.retireItem(item),
                text: 'Retire this item',
              }),
              h('p', {
                class: 'hint',
                text: 'Takes it off the menu at the next save. Its stock count is kept, so a restore brings it back as it was.',
              }),
            )
          : h('button', {
              type: 'button',
              class: 'btn btn-danger',
              dataset: { action: 'remove-item', key: 'remove-item' },
              onclick: () => ed.retireItem(item),
              text: 'Remove this new item',
            }),
      ),
    );
    return form;
  }

  function categorySelect(item, cat, p) {
    const id = ed.fieldId();
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id, text: 'Category' }),
      h(
        'select',
        {
          id,
          dataset: { field: 'category', key: 'category', errorKey: `${p}:category:` },
          onchange: (event) => {
            const to = st.categories.find((c) => c.uid === event.target.value);
            if (!to || to === cat) return;
            cat.items = cat.items.filter((u) => u !== item.uid);
            to.items.push(item.uid);
            ed.changed();
            ed.renderOutline();
            ed.renderDetail();
            announce(`Moved to ${ed.displayText(to.text) || 'the new category'}, at its end.`);
          },
        },
        st.categories.map((c) =>
          h('option', { value: c.uid, selected: c === cat, text: ed.displayText(c.text) || 'New category' }),
        ),
      ),
    );
  }

  function stationField(item, p) {
    const id = ed.fieldId();
    const stations = [
      ...new Set([...st.items.values()].map((i) => i.station.trim()).filter(Boolean)),
    ].sort();
    const listId = `${id}-list`;
    return h(
      'div',
      { class: 'field' },
      h('label', { for: id, text: 'Kitchen station (optional)' }),
      h('input', {
        id,
        type: 'text',
        list: listId,
        autocomplete: 'off',
        value: item.station,
        placeholder: 'e.g. grill, bar',
        'aria-describedby': `${id}-hint`,
        dataset: { field: 'station', key: 'station', errorKey: `${p}:station:` },
        oninput: (event) => {
          item.station = event.target.value;
          ed.clearErrorsOf(event.target);
          ed.changed();
        },
      }),
      h('datalist', { id: listId }, stations.map((s) => h('option', { value: s }))),
      h('p', { id: `${id}-hint`, class: 'hint', text: 'Where it is made. Guests do not see it.' }),
    );
  }

  function allergenFields(item, p) {
    const checkbox = (code, label, ja) => {
      const id = ed.fieldId();
      return h(
        'div',
        { class: 'check' },
        h('input', {
          id,
          type: 'checkbox',
          checked: item.allergens.includes(code),
          dataset: { allergen: code, key: `allergen:${code}` },
          onchange: (event) => {
            if (event.target.checked) {
              if (!item.allergens.includes(code)) item.allergens.push(code);
            } else item.allergens = item.allergens.filter((c) => c !== code);
            ed.changed();
          },
        }),
        h('label', { for: id }, label, ja ? h('span', { class: 'ja', lang: 'ja', text: ` ${ja}` }) : null),
      );
    };
    const unknown = item.allergens.filter((c) => !ALLERGEN_NAMES.has(c));
    const hintId = ed.fieldId();
    return h(
      'fieldset',
      { class: 'allergens', 'aria-describedby': hintId, dataset: { errorKey: `${p}:allergens:` } },
      h('legend', { text: 'Allergens' }),
      h('p', { id: hintId, class: 'hint', text: 'Tick every allergen the dish contains. Guests see them on the menu.' }),
      h('h4', { class: 'check-heading', text: 'The EU’s 14 (Japanese label in brackets where Japan lists it too)' }),
      h('div', { class: 'check-grid' }, ALLERGENS.filter((a) => a.eu).map((a) => checkbox(a.code, a.name, a.ja))),
      h('h4', { class: 'check-heading', text: 'The rest of Japan’s 28' }),
      h('div', { class: 'check-grid' }, ALLERGENS.filter((a) => !a.eu).map((a) => checkbox(a.code, a.name, a.ja))),
      unknown.length
        ? h(
            'div',
            {},
            h('h4', { class: 'check-heading', text: 'Other codes stored on this item' }),
            h('div', { class: 'check-grid' }, unknown.map((c) => checkbox(c, c))),
          )
        : null,
    );
  }

  function tagFields(item, p) {
    const otherId = ed.fieldId();
    const others = item.tags.filter((t) => !COMMON_TAG_SET.has(t));
    return h(
      'fieldset',
      { class: 'tags', dataset: { errorKey: `${p}:tags:` } },
      h('legend', { text: 'Tags' }),
      h(
        'div',
        { class: 'check-grid check-grid-tags' },
        COMMON_TAGS.map(({ tag, name }) => {
          const id = ed.fieldId();
          return h(
            'div',
            { class: 'check' },
            h('input', {
              id,
              type: 'checkbox',
              checked: item.tags.includes(tag),
              dataset: { tag, key: `tag:${tag}` },
              onchange: (event) => {
                if (event.target.checked) {
                  if (!item.tags.includes(tag)) item.tags.push(tag);
                } else item.tags = item.tags.filter((t) => t !== tag);
                ed.changed();
              },
            }),
            h('label', { for: id, text: name }),
          );
        }),
      ),
      h(
        'div',
        { class: 'field' },
        h('label', { for: otherId, text: 'Other tags' }),
        h('input', {
          id: otherId,
          type: 'text',
          autocomplete: 'off',
          spellcheck: 'false',
          value: others.join(', '),
          placeholder: 'e.g. house_special, new',
          'aria-describedby': `${otherId}-hint`,
          dataset: { field: 'other-tags', key: 'other-tags', errorKey: `${p}:tags:` },
          oninput: (event) => {
            const typed = event.target.value
              .split(/[\s,]+/)
              .map((t) => t.trim())
              .filter(Boolean);
            const common = item.tags.filter((t) => COMMON_TAG_SET.has(t));
            item.tags = [...new Set([...common, ...typed])];
            ed.clearErrorsOf(event.target);
            ed.changed();
          },
        }),
        h('p', {
          id: `${otherId}-hint`,
          class: 'hint',
          text: 'Separated by commas: lowercase letters, digits and _ (at most 32 each, 16 tags in all).',
        }),
      ),
    );
  }

  function toppingFields(item, p) {
    const maxId = ed.fieldId();
    const offered = st.toppings.filter((t) => item.toppingIds.includes(t.uid));
    // Toppings the item lists that this editor does not have (kept as they are).
    const unknown = item.toppingIds.filter((id) => !st.toppings.some((t) => t.uid === id));
    return h(
      'fieldset',
      { class: 'toppings', dataset: { errorKey: `${p}:toppingIds:` } },
      h('legend', { text: 'Toppings offered' }),
      st.toppings.length
        ? h(
            'div',
            { class: 'check-grid' },
            st.toppings.map((t) => {
              const id = ed.fieldId();
              const price = ed.parseMajor(t.priceInput || '0');
              return h(
                'div',
                { class: 'check' },
                h('input', {
                  id,
                  type: 'checkbox',
                  checked: item.toppingIds.includes(t.uid),
                  dataset: { toppingId: t.uid, key: `topping:${t.uid}` },
                  onchange: (event) => {
                    const before = item.toppingIds.length;
                    if (event.target.checked) item.toppingIds.push(t.uid);
                    else item.toppingIds = item.toppingIds.filter((x) => x !== t.uid);
                    // "Up to all of them" follows the list; a smaller limit stays, within it.
                    if (item.maxToppings >= before) item.maxToppings = item.toppingIds.length;
                    item.maxToppings = Math.min(item.maxToppings, item.toppingIds.length);
                    ed.changed();
                    ed.renderDetail();
                  },
                }),
                h(
                  'label',
                  { for: id },
                  ed.displayText(t.name) || 'New topping',
                  price === null ? null : h('span', { class: 'hint', text: ` +${st.money(price)}` }),
                ),
              );
            }),
          )
        : h('p', { class: 'hint', text: 'The shop has no toppings. Add them under “Toppings” in the list.' }),
      unknown.length ? h('p', { class: 'hint', text: `Also ${unknown.length} topping id(s) kept as stored.` }) : null,
      h(
        'div',
        { class: 'field field-inline' },
        h('label', { for: maxId, text: 'Guests may pick up to' }),
        h('input', {
          id: maxId,
          type: 'number',
          class: 'num-input',
          min: '0',
          max: String(item.toppingIds.length),
          step: '1',
          inputmode: 'numeric',
          value: String(item.maxToppings),
          disabled: item.toppingIds.length === 0 && item.maxToppings === 0,
          dataset: { field: 'max-toppings', key: 'max-toppings', errorKey: `${p}:maxToppings:` },
          oninput: (event) => {
            const n = Number(event.target.value);
            if (Number.isInteger(n) && n >= 0) item.maxToppings = n;
            ed.clearErrorsOf(event.target);
            ed.changed();
          },
        }),
        h('span', { class: 'hint', text: `of ${offered.length + unknown.length}` }),
      ),
    );
  }

  return { itemForm };
}
