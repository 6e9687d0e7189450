// Menu editor of the staff console: /staff/{shopId}#menu
//
// Loads the catalog (GET …/catalog, staff) and keeps its ETag; edits it in
// memory; saves the whole of it with PUT …/catalog and If-Match. The shop's
// languages (GET …/shops/{id}, `languages`, first = default; ["en"] when
// absent) decide the text fields: one plain field per text while the shop has
// one language, one field per language (saved as {lang: text}) with several.
// A text nobody touched is sent back exactly as it was stored.
//
// Categories have no order of their own in the catalog: their order is the
// order of their first items, so the editor writes the items category by
// category. An item left out of a PUT is retired (its stock is kept by the
// server); retired items stay in this page's memory, with a Restore button,
// until the menu is reloaded, also across saves: a restored item goes back
// under its own menuItemId and the server brings its stock back.
//
// The editor is made of parts, one module each (menu-editor-<part>.js):
//   state      the editor's state (st) and the uids of new things
//   texts      texts per language: as stored, as typed, as sent back
//   model      catalog ↔ editor things, the PUT body, what changed
//   sync       loading and saving (If-Match; 412 conflict, 422 problems)
//   errors     the problems of a refused save, next to their fields
//   outline    the list of categories and items, the retired items
//   fields     text fields (per language) and price fields
//   item       the item form; photo and groups are parts of it:
//   photo      an item's photo upload
//   groups     an item's option groups and their options
//   category   adding a category, the category form
//   toppings   the shop's toppings form
//   retire     adding, retiring (or removing) and restoring items
//   languages  the shop's languages panel
//   preview    "Preview as guest" (GET …/menu)
//   dom        small DOM helpers (↑/↓ buttons, focus across re-renders)
//   data       what the editor knows without a DOM (allergens, tags, group
//              presets, language names, prices in major units)
// This module makes them and draws the page from them (renderAll); it is the
// one the console imports. Each part is a function of the editor's context
// `ed` ({st, $, root, shopPath, onSaved} and every part's functions): a part
// calls another part's functions through `ed` when it runs, so the parts
// import nothing of each other, and each name is provided by one part only.
//
// Test hooks (besides staff.js's and console.js's):
//   #menu                  the editor's section (shown at #menu): data-state =
//                          loading | ready | saving | error; data-version (the
//                          catalog version last loaded or saved); data-dirty
//   #menu-save             saves (PUT …/catalog with If-Match); Ctrl+S / ⌘S too
//   #menu-reload           reads the catalog again (asks first, in #menu-discard,
//                          when there are unsaved changes: #menu-discard-confirm,
//                          #menu-discard-cancel)
//   #menu-dirty            "Unsaved changes" (shown while there are)
//   #menu-status           the last result, data-kind = info | ok | error
//   #menu-conflict         shown after a 412: #menu-conflict-text "Someone else
//                          saved the menu (now version N). …", #menu-conflict-reload
//   #menu-errors           the problems of the last refused save (422, or a price
//                          that is not a number): #menu-errors-list li[data-path]
//                          (the server's field path), its button goes to the field
//   #menu-categories > li[data-category-uid]  a category, data-category (its text
//                          in the default language); button[data-action=select-category],
//                          [data-action=category-up|category-down], [data-action=add-item]
//     li[data-uid]         an item: data-item-id (its menuItemId, "" while new),
//                          data-changed, data-invalid; button[data-action=select-item]
//                          (aria-current when shown), [data-action=item-up|item-down]
//   #menu-add-category, #menu-toppings-open
//   #menu-retired li[data-uid][data-item-id]   a retired item, data-saved (true
//                          once a save retired it); button[data-action=restore]
//   #menu-detail           the form of what is selected:
//     form#menu-item-form[data-uid][data-item-id]  an item:
//       [data-field=name|description][data-lang]  one per language (data-lang=""
//                          for the plain field of a one-language shop)
//       select[data-field=category], input[data-field=price] (major units),
//       input[data-field=station], input[data-allergen=<code>], input[data-tag=<tag>],
//       input[data-field=other-tags], input[data-topping-id], input[data-field=max-toppings],
//       input[data-field=photo] (file), img[data-role=photo-preview], [data-role=photo-status],
//       button[data-action=remove-photo], button[data-action=retire] (saved items) or
//       button[data-action=remove-item] (new ones)
//       fieldset[data-group-uid][data-group-id]  an option group:
//         [data-field=group-name][data-lang], select[data-field=group-rule]
//         (required-one | optional-one | optional-any | required-any | custom),
//         input[data-field=min-choices|max-choices] (custom only),
//         [data-action=group-up|group-down|remove-group|add-option]
//         li[data-option-uid][data-option-id]  an option: [data-field=option-name][data-lang],
//           input[data-field=option-price], [data-action=option-up|option-down|remove-option]
//       button[data-action=add-group]
//     form#menu-category-form[data-category-uid]: [data-field=category-name][data-lang],
//       [data-action=add-item], [data-action=delete-category] (empty categories only)
//     form#menu-toppings-form: li[data-topping-uid][data-topping-id] with
//       [data-field=topping-name][data-lang], input[data-field=topping-price],
//       [data-action=remove-topping]; #menu-add-topping; retired ones with [data-action=restore-topping]
//     [data-role=field-error][data-path]  a problem next to its field (the field has
//                          aria-invalid=true and aria-describedby pointing at it)
//   #menu-languages        the shop's languages (a <details>): #menu-language-list
//                          li[data-lang] with [data-action=language-up|language-down|language-remove];
//                          #menu-language-input + #menu-language-add; #menu-languages-save
//                          (PATCH /shops/{id}); #menu-languages-message[data-kind]
//   #menu-preview-open     opens #menu-preview-dialog: the saved menu as guests get it
//                          (GET …/menu): #menu-preview-lang (several languages only),
//                          #menu-preview [data-item-id], #menu-preview-close

import { h } from './console.js';
import { createCategories } from './menu-editor-category.js';
import { debounce, focusedKey, restoreFocus } from './menu-editor-dom.js';
import { createErrors } from './menu-editor-errors.js';
import { createFields } from './menu-editor-fields.js';
import { createGroups } from './menu-editor-groups.js';
import { createItemForm } from './menu-editor-item.js';
import { createLanguages } from './menu-editor-languages.js';
import { createModel } from './menu-editor-model.js';
import { createOutline } from './menu-editor-outline.js';
import { createPhoto } from './menu-editor-photo.js';
import { createPreview } from './menu-editor-preview.js';
import { createRetire } from './menu-editor-retire.js';
import { createState } from './menu-editor-state.js';
import { createSync } from './menu-editor-sync.js';
import { createTexts } from './menu-editor-texts.js';
import { createToppings } from './menu-editor-toppings.js';

export function createMenuEditor({ shopId, onSaved = () => {} }) {
  const $ = (id) => document.getElementById(id);
  const ed = {
    shopPath: `/api/v1/shops/${encodeURIComponent(shopId)}`,
    $,
    root: $('menu'),
    st: createState(),
    onSaved,
  };
  const { st, root } = ed;
  const provide = (fns) => {
    for (const [name, fn] of Object.entries(fns)) {
      if (name in ed) throw new Error(`menu editor: ${name} is provided twice`);
      ed[name] = fn;
    }
  };

  // ------------------------------------------------------------ rendering

  function renderAll() {
    ed.renderLanguages();
    ed.renderOutline();
    renderDetail();
    ed.renderErrorsSummary();
    renderDirty();
  }

  const renderDirtySoon = debounce(() => {
    renderDirty();
    ed.updateOutlineFlags();
  }, 150);

  function renderDirty() {
    const dirty = ed.isDirty();
    root.dataset.dirty = String(dirty);
    root.dataset.version = st.version === null ? '' : String(st.version);
    $('menu-dirty').hidden = !dirty;
    $('menu-version').textContent = st.version === null ? '' : `Version ${st.version}`;
  }

  function renderDetail() {
    const detail = $('menu-detail');
    const key = focusedKey(detail);
    const sel = st.selection;
    let form = null;
    if (!st.loaded) form = h('p', { class: 'empty', text: 'Loading…' });
    else if (sel?.kind === 'item' && st.items.has(sel.uid) && !st.items.get(sel.uid).retired)
      form = ed.itemForm(st.items.get(sel.uid));
    else if (sel?.kind === 'category' && st.categories.some((c) => c.uid === sel.uid))
      form = ed.categoryForm(st.categories.find((c) => c.uid === sel.uid));
    else if (sel?.kind === 'toppings') form = ed.toppingsForm();
    else form = h('p', { class: 'empty', text: 'Choose an item or a category on the left, or add one.' });
    detail.replaceChildren(form);
    ed.attachErrors(detail);
    restoreFocus(detail, key);
  }

  function changed() {
    renderDirtySoon();
  }

  // ------------------------------------------------------------ the parts

  provide({ renderAll, renderDirty, renderDetail, changed });
  for (const make of [
    createTexts,
    createModel,
    createSync,
    createErrors,
    createOutline,
    createFields,
    createItemForm,
    createPhoto,
    createGroups,
    createCategories,
    createToppings,
    createRetire,
    createLanguages,
    createPreview,
  ]) {
    provide(make(ed));
  }

  // ------------------------------------------------------------ public

  return {
    /** The token works: load once the editor is shown (or now if it is). */
    start() {
      st.started = true;
      if (st.visible && !st.loaded) ed.reload();
    },
    /** The editor's view became visible (or hidden). */
    setVisible(visible) {
      st.visible = visible;
      if (visible && st.started && !st.loaded && !st.loading) ed.reload();
    },
    isDirty: ed.isDirty,
  };
}
