// Menu editor (menu-editor.js): the problems of a refused save (the server's
// 422, or prices that are not numbers): each server field path resolved to
// what to select and the fields that can show it (their data-error-key), a
// readable "where" for #menu-errors, the problem put next to its field
// (aria-invalid, aria-describedby) and the focus moved there; editing a field
// takes its problem as dealt with. Kept apart: it only reads the model and
// the forms' error keys, and the forms only mark their fields with those keys.

import { announce, h } from './console.js';
import { langName, LANGUAGE_TAG } from './menu-editor-data.js';

export function createErrors(ed) {
  const { st, $ } = ed;

  /**
   * Where a server field path points: what to select, and the error keys of
   * the fields that could show it, most specific first.
   */
  function resolvePath(path, map) {
    const top = /^(items|toppings)\[(\d+)\](.*)$/.exec(path);
    if (!top) return { target: null, keys: [] };
    const segs = [];
    const re = /\.([^.[\]]+)|\[(\d+)\]/g;
    let m;
    while ((m = re.exec(top[3]))) segs.push(m[1] !== undefined ? { name: m[1] } : { index: Number(m[2]) });
    const index = Number(top[2]);
    if (top[1] === 'toppings') {
      const uid = map.toppings[index];
      if (!uid) return { target: null, keys: [] };
      const field = segs[0]?.name || '';
      const lang = segs[1]?.name || '';
      return { target: { kind: 'toppings' }, keys: fieldKeys(`t:${uid}`, field, lang, ['toppings::']) };
    }
    const entry = map.items[index];
    if (!entry) return { target: null, keys: [] };
    const itemBase = `i:${entry.uid}`;
    const parents = [`${itemBase}::`];
    let prefix = itemBase;
    let i = 0;
    if (segs[0]?.name === 'category') {
      const lang = segs[1]?.name || '';
      const cat = ed.categoryOf(entry.uid) || st.categories.find((c) => c.uid === entry.cat);
      if (!cat) return { target: { kind: 'item', uid: entry.uid }, keys: parents };
      return { target: { kind: 'category', uid: cat.uid }, keys: fieldKeys(`c:${cat.uid}`, 'name', lang, []) };
    }
    if (segs[0]?.name === 'optionGroups' && segs[1]?.index !== undefined) {
      const group = entry.groups[segs[1].index];
      if (group) {
        prefix = `g:${group.uid}`;
        parents.unshift(`${prefix}::`);
        i = 2;
        if (segs[2]?.name === 'options' && segs[3]?.index !== undefined) {
          const option = group.options[segs[3].index];
          if (option) {
            parents.unshift(`${prefix}:options:`);
            prefix = `o:${option}`;
            parents.unshift(`${prefix}::`);
            i = 4;
          }
        }
      }
    }
    const field = segs[i]?.name || '';
    const lang = segs[i + 1]?.name || '';
    const extra = field === 'minChoices' || field === 'maxChoices' ? [`${prefix}:rule:`] : [];
    return {
      target: { kind: 'item', uid: entry.uid },
      keys: fieldKeys(prefix, field, lang, [...extra, ...parents]),
    };
  }
  // The server says `name`; the fields of groups, options, toppings and
  // categories are keyed `group-name`, `option-name`, … (their test hooks).
  const FIELD_ALIASES = {
    g: { name: 'group-name' },
    o: { name: 'option-name' },
    t: { name: 'topping-name' },
    c: { name: 'category-name' },
  };
  function fieldKeys(prefix, serverField, lang, parents) {
    const field = FIELD_ALIASES[prefix.split(':')[0]]?.[serverField] ?? serverField;
    const keys = [];
    if (field && lang) keys.push(`${prefix}:${field}:${lang}`);
    if (field) keys.push(`${prefix}:${field}:`);
    keys.push(`${prefix}::`);
    return [...new Set([...keys, ...parents])];
  }

  const FIELD_WORDS = {
    name: 'name',
    description: 'description',
    category: 'category',
    price: 'price',
    station: 'station',
    allergens: 'allergens',
    tags: 'tags',
    toppingIds: 'toppings',
    maxToppings: 'toppings limit',
    imageId: 'photo',
    optionGroups: 'option groups',
    options: 'options',
    minChoices: 'minimum choices',
    maxChoices: 'maximum choices',
  };

  /** "“Steak” › Doneness › option 2 › name (Japanese)" for a server field path. */
  function humanPath(path, map) {
    const top = /^(items|toppings)\[(\d+)\](.*)$/.exec(path);
    if (!top) return path || 'The menu';
    const index = Number(top[2]);
    const parts = [];
    const rest = top[3].split('.').filter(Boolean);
    if (top[1] === 'toppings') {
      const t = st.toppings.find((x) => x.uid === map.toppings[index]);
      parts.push(`Topping “${t ? ed.displayText(t.name) || `#${index + 1}` : `#${index + 1}`}”`);
    } else {
      const entry = map.items[index];
      const item = entry && st.items.get(entry.uid);
      parts.push(`“${item ? ed.displayText(item.name) || 'New item' : `item ${index + 1}`}”`);
      let group = null;
      for (const seg of rest) {
        const m = /^(\w+)(?:\[(\d+)\])?$/.exec(seg);
        if (!m) continue;
        const [, name, i] = m;
        if (name === 'optionGroups' && i !== undefined && item) {
          group = item.groups.find((g) => g.uid === entry.groups[Number(i)]?.uid) || null;
          parts.push(group ? ed.displayText(group.name) || `group ${Number(i) + 1}` : `group ${Number(i) + 1}`);
        } else if (name === 'options' && i !== undefined) {
          parts.push(`option ${Number(i) + 1}`);
        } else if (FIELD_WORDS[name]) {
          parts.push(FIELD_WORDS[name]);
        } else if (st.languages.includes(name) || LANGUAGE_TAG.test(name)) {
          parts[parts.length - 1] += ` (${langName(name)})`;
        }
      }
      return parts.join(' › ');
    }
    for (const seg of rest) {
      if (FIELD_WORDS[seg]) parts.push(FIELD_WORDS[seg]);
      else if (LANGUAGE_TAG.test(seg)) parts[parts.length - 1] += ` (${langName(seg)})`;
    }
    return parts.join(' › ');
  }

  function showErrors(errors, map, headline) {
    st.errors = errors.map((e) => {
      const path = String(e.field || '');
      return { path, where: humanPath(path, map), message: String(e.message || ''), ...resolvePath(path, map) };
    });
    const first = st.errors.find((e) => e.target) || null;
    ed.status('error', headline);
    announce(`${headline} ${st.errors.length === 1 ? '1 problem' : `${st.errors.length} problems`}.`);
    if (first) st.selection = first.target;
    ed.renderAll();
    if (first) focusError(first);
    else $('menu-errors').focus();
  }

  function renderErrorsSummary() {
    const box = $('menu-errors');
    const list = $('menu-errors-list');
    box.hidden = st.errors.length === 0;
    $('menu-errors-title').textContent =
      st.errors.length === 1 ? '1 problem to fix before saving' : `${st.errors.length} problems to fix before saving`;
    list.replaceChildren(
      ...st.errors.map((e) =>
        h(
          'li',
          { dataset: { path: e.path } },
          h(
            'button',
            {
              type: 'button',
              class: 'link-button',
              onclick: () => {
                if (e.target) {
                  st.selection = e.target;
                  ed.renderAll();
                  focusError(e);
                }
              },
            },
            h('span', { class: 'error-where', text: e.where }),
            h('span', { text: `: ${e.message}` }),
          ),
        ),
      ),
    );
  }

  /** Put each problem of the shown form next to its field. */
  function attachErrors(container) {
    let n = 0;
    for (const e of st.errors) {
      const el = e.keys.map((k) => container.querySelector(`[data-error-key="${CSS.escape(k)}"]`)).find(Boolean);
      if (!el) continue;
      const id = `menu-err-${(n += 1)}`;
      const p = h('p', { id, class: 'field-error', dataset: { role: 'field-error', path: e.path }, text: e.message });
      const control = ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName);
      if (control) (el.closest('.field') || el.parentElement).append(p);
      else el.append(p);
      if (control) el.setAttribute('aria-invalid', 'true');
      const described = (el.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
      el.setAttribute('aria-describedby', [...described, id].join(' '));
      e.shownAt = el.dataset.errorKey;
    }
  }

  function focusError(e) {
    const detail = $('menu-detail');
    const el = e.keys.map((k) => detail.querySelector(`[data-error-key="${CSS.escape(k)}"]`)).find(Boolean);
    if (!el) return;
    const target = ['INPUT', 'SELECT', 'TEXTAREA', 'BUTTON'].includes(el.tagName)
      ? el
      : el.querySelector('input, select, textarea, button') || el;
    target.focus();
    target.scrollIntoView({ block: 'center' });
  }

  /** A field was edited: its problems are taken as dealt with. */
  function clearErrorsOf(el) {
    const key = el.dataset.errorKey;
    if (!key || !st.errors.length) return;
    const before = st.errors.length;
    st.errors = st.errors.filter((e) => e.shownAt !== key);
    if (st.errors.length === before) return;
    el.removeAttribute('aria-invalid');
    const holder = el.closest('.field') || el.parentElement;
    for (const p of holder.querySelectorAll(':scope > [data-role=field-error]')) p.remove();
    renderErrorsSummary();
    ed.renderOutline();
  }

  return { showErrors, renderErrorsSummary, attachErrors, clearErrorsOf };
}
