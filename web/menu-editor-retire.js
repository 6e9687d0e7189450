// Menu editor (menu-editor.js): items coming onto and going off the menu:
// adding a new item to a category, retiring a saved one (or removing a new
// one) and restoring a retired one into its category. A retired item stays in
// the editor's memory, under its own menuItemId, so that a restore brings it
// back with its stock.

import { announce } from './console.js';
import { stable } from './menu-editor-data.js';
import { focusIn } from './menu-editor-dom.js';
import { nextId } from './menu-editor-state.js';

export function createRetire(ed) {
  const { st, $ } = ed;

  function addItem(cat) {
    const item = ed.newItem(cat);
    st.selection = { kind: 'item', uid: item.uid };
    ed.changed();
    ed.renderAll();
    focusIn('[data-field=name]');
    announce(`New item in ${ed.displayText(cat.text) || 'the new category'}. Give it a name and a price.`);
  }

  function retireItem(item) {
    const cat = ed.categoryOf(item.uid);
    if (cat) {
      const at = cat.items.indexOf(item.uid);
      cat.items.splice(at, 1);
      const next = cat.items[Math.min(at, cat.items.length - 1)];
      st.selection = next ? { kind: 'item', uid: next } : { kind: 'category', uid: cat.uid };
    }
    const name = ed.displayText(item.name) || 'The new item';
    if (item.orig?.menuItemId) {
      item.retired = true;
      item.retiredSaved = false;
      item.retiredFrom = cat ? cat.text : null;
      st.retired = [item.uid, ...st.retired.filter((u) => u !== item.uid)];
      announce(`${name} will be retired when you save. Restore brings it back.`);
    } else {
      st.items.delete(item.uid);
      announce(`${name} removed.`);
    }
    st.errors = st.errors.filter((e) => !(e.target && e.target.kind === 'item' && e.target.uid === item.uid));
    ed.changed();
    ed.renderAll();
    const restore = $('menu-retired').querySelector(`li[data-uid="${CSS.escape(item.uid)}"] [data-action=restore]`);
    (restore || $('menu-add-category')).focus();
  }

  function restoreItem(uid) {
    const item = st.items.get(uid);
    if (!item) return;
    item.retired = false;
    st.retired = st.retired.filter((u) => u !== uid);
    const text = item.retiredFrom || ed.textFrom(item.orig?.category ?? '');
    const key = stable(ed.textOut(text) ?? '');
    let cat = st.categories.find((c) => c.text === text || stable(ed.textOut(c.text) ?? '') === key);
    if (!cat) {
      cat = { uid: nextId('cat-'), text, items: [] };
      st.categories.push(cat);
    }
    cat.items.push(uid);
    st.selection = { kind: 'item', uid };
    ed.changed();
    ed.renderAll();
    announce(`${ed.displayText(item.name)} is back on the menu (in ${ed.displayText(cat.text)}) once you save.`);
    $('menu-outline').querySelector(`li[data-uid="${CSS.escape(uid)}"] [data-action=select-item]`)?.focus();
  }

  return { addItem, retireItem, restoreItem };
}
