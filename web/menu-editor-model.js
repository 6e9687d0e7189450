// Menu editor (menu-editor.js): the model. The catalog (GET …/catalog) made
// into editor things (categories in menu order, items, option groups,
// options, toppings, with prices as typed in major units), those made back
// into the PUT body (buildCatalog, with which editor thing each index of it
// is, for the server's field paths), the load after a GET or a save (keeping
// the retired items and the selection), and what is changed since then.
// No DOM here: the forms edit these things, this says what they mean.

import { formatMinor as formatMinorIn, parseMajor as parseMajorIn, RULES, stable } from './menu-editor-data.js';
import { nextId } from './menu-editor-state.js';

export function createModel(ed) {
  const { st } = ed;

  function formatMinor(minor) {
    return formatMinorIn(minor, st.digits);
  }
  function parseMajor(text) {
    return parseMajorIn(text, st.digits);
  }
  function priceExample() {
    return st.digits ? `${'12'}.${'5'.padEnd(st.digits, '0')}` : '1200';
  }

  function itemFrom(raw) {
    const item = {
      uid: raw.menuItemId || nextId('new-item-'),
      orig: raw,
      name: ed.textFrom(raw.name),
      description: ed.textFrom(raw.description),
      priceInput: formatMinor(raw.price),
      station: raw.station ?? '',
      allergens: Array.isArray(raw.allergens) ? [...raw.allergens] : [],
      tags: Array.isArray(raw.tags) ? [...raw.tags] : [],
      toppingIds: Array.isArray(raw.toppingIds) ? [...raw.toppingIds] : [],
      maxToppings: Number.isInteger(raw.maxToppings) ? raw.maxToppings : (raw.toppingIds || []).length,
      imageId: raw.imageId || null,
      imageUrl: raw.imageUrl || (raw.imageId ? `/images/${encodeURIComponent(raw.imageId)}` : null),
      groups: (raw.optionGroups || []).map(groupFrom),
      retired: false,
      retiredSaved: false,
      photo: { busy: false, message: '', kind: '' },
    };
    return item;
  }
  function groupFrom(raw) {
    const count = (raw.options || []).length;
    const min = raw.minChoices ?? 0;
    const max = raw.maxChoices ?? count;
    let rule = 'custom';
    if (min === 1 && max === 1) rule = 'required-one';
    else if (min === 0 && max === 1) rule = 'optional-one';
    else if (min === 0 && max === count) rule = 'optional-any';
    else if (min === 1 && max === count) rule = 'required-any';
    return {
      uid: raw.groupId || nextId('new-group-'),
      orig: raw,
      name: ed.textFrom(raw.name),
      rule,
      minInput: String(min),
      maxInput: String(max),
      options: (raw.options || []).map(optionFrom),
    };
  }
  function optionFrom(raw) {
    return {
      uid: raw.optionId || nextId('new-option-'),
      orig: raw,
      name: ed.textFrom(raw.name),
      priceInput: formatMinor(raw.price ?? 0),
    };
  }
  function toppingFrom(raw) {
    return {
      uid: raw.toppingId || nextId('new-topping-'),
      orig: raw,
      name: ed.textFrom(raw.name),
      priceInput: formatMinor(raw.price ?? 0),
    };
  }

  function newItem(cat) {
    const item = itemFrom({});
    item.orig = null;
    item.name = ed.newText();
    item.description = ed.newText();
    item.priceInput = '';
    st.items.set(item.uid, item);
    cat.items.push(item.uid);
    return item;
  }

  function categoryOf(uid) {
    return st.categories.find((c) => c.items.includes(uid)) || null;
  }

  function itemOut(item, cat) {
    const out = { ...(item.orig || {}) };
    delete out.imageUrl;
    const name = ed.textOut(item.name);
    out.name = name === undefined ? '' : name;
    const description = ed.textOut(item.description, { optional: true });
    if (description === undefined) delete out.description;
    else out.description = description;
    const category = cat ? ed.textOut(cat.text) : '';
    out.category = category === undefined ? '' : category;
    const price = parseMajor(item.priceInput);
    out.price = price === null ? item.priceInput : price;
    out.toppingIds = [...item.toppingIds];
    out.maxToppings = item.maxToppings;
    out.allergens = [...item.allergens];
    out.tags = [...item.tags];
    if (item.station.trim() === '') delete out.station;
    else out.station = item.station;
    out.optionGroups = item.groups.map(groupOut);
    if (item.imageId) out.imageId = item.imageId;
    else delete out.imageId;
    return out;
  }
  function groupOut(g) {
    const out = { ...(g.orig || {}) };
    out.name = ed.textOut(g.name) ?? '';
    const count = g.options.length;
    const preset = RULES.find((r) => r.rule === g.rule);
    if (g.rule === 'custom') {
      const min = g.minInput.trim();
      const max = g.maxInput.trim();
      if (min === '') delete out.minChoices;
      else out.minChoices = Number(min);
      if (max === '') delete out.maxChoices;
      else out.maxChoices = Number(max);
    } else {
      out.minChoices = preset.min;
      out.maxChoices = preset.max === 'all' ? count : preset.max;
    }
    out.options = g.options.map((o) => {
      const opt = { ...(o.orig || {}) };
      opt.name = ed.textOut(o.name) ?? '';
      const price = o.priceInput.trim() === '' ? 0 : parseMajor(o.priceInput);
      opt.price = price === null ? o.priceInput : price;
      return opt;
    });
    return out;
  }
  function toppingOut(t) {
    const out = { ...(t.orig || {}) };
    out.name = ed.textOut(t.name) ?? '';
    const price = t.priceInput.trim() === '' ? 0 : parseMajor(t.priceInput);
    out.price = price === null ? t.priceInput : price;
    return out;
  }

  /** The PUT body, and which editor thing each index of it is. */
  function buildCatalog() {
    const map = { items: [], toppings: [] };
    const toppings = st.toppings.map((t) => {
      map.toppings.push(t.uid);
      return toppingOut(t);
    });
    const items = [];
    for (const cat of st.categories) {
      for (const uid of cat.items) {
        const item = st.items.get(uid);
        map.items.push({
          uid,
          cat: cat.uid,
          groups: item.groups.map((g) => ({ uid: g.uid, options: g.options.map((o) => o.uid) })),
        });
        items.push(itemOut(item, cat));
      }
    }
    return { body: { toppings, items }, map };
  }

  function load(catalog, etag, { keep = null } = {}) {
    const oldSelection = st.selection;
    const oldRetired = keep ? st.retired.map((uid) => st.items.get(uid)).filter(Boolean) : [];
    const oldRetiredToppings = keep ? st.retiredToppings : [];
    st.items = new Map();
    st.categories = [];
    const byKey = new Map();
    for (const raw of catalog.items || []) {
      const item = itemFrom(raw);
      st.items.set(item.uid, item);
      const key = stable(raw.category ?? '');
      let cat = byKey.get(key);
      if (!cat) {
        cat = { uid: nextId('cat-'), text: ed.textFrom(raw.category ?? ''), items: [] };
        byKey.set(key, cat);
        st.categories.push(cat);
      }
      cat.items.push(item.uid);
    }
    st.toppings = (catalog.toppings || []).map(toppingFrom);
    st.retired = [];
    for (const item of oldRetired) {
      if (st.items.has(item.uid)) continue; // back on the menu
      if (item.orig && item.orig.menuItemId) {
        item.retiredSaved = true;
        st.items.set(item.uid, item);
        st.retired.push(item.uid);
      }
    }
    st.retiredToppings = oldRetiredToppings.filter((t) => t.orig && !st.toppings.some((x) => x.uid === t.uid));
    for (const t of st.retiredToppings) t.retiredSaved = true;
    st.version = catalog.version;
    st.etag = etag || `"${catalog.version}"`;
    st.errors = [];
    // Keep what was selected, found through its place in the saved body.
    st.selection = null;
    if (keep && oldSelection) {
      if (oldSelection.kind === 'item') {
        const index = keep.items.findIndex((m) => m.uid === oldSelection.uid);
        const saved = index >= 0 ? catalog.items[index] : null;
        if (saved && st.items.has(saved.menuItemId)) st.selection = { kind: 'item', uid: saved.menuItemId };
        else if (st.items.has(oldSelection.uid)) st.selection = oldSelection;
      } else if (oldSelection.kind === 'category') {
        const index = keep.items.findIndex((m) => m.cat === oldSelection.uid);
        const saved = index >= 0 ? catalog.items[index] : null;
        const cat = saved && categoryOf(saved.menuItemId);
        if (cat) st.selection = { kind: 'category', uid: cat.uid };
      } else {
        st.selection = oldSelection;
      }
    }
    if (!st.selection && st.categories.length && st.categories[0].items.length) {
      st.selection = { kind: 'item', uid: st.categories[0].items[0] };
    }
    setBaseline();
  }

  function setBaseline() {
    const { body } = buildCatalog();
    st.baseline = stable(body);
    st.baselineItems = new Map();
    for (const cat of st.categories) {
      for (const uid of cat.items) st.baselineItems.set(uid, stable(itemOut(st.items.get(uid), cat)));
    }
  }

  function isDirty() {
    if (!st.loaded) return false;
    return stable(buildCatalog().body) !== st.baseline;
  }

  function itemChanged(uid) {
    const cat = categoryOf(uid);
    if (!cat) return false;
    return st.baselineItems.get(uid) !== stable(itemOut(st.items.get(uid), cat));
  }

  return {
    formatMinor,
    parseMajor,
    priceExample,
    groupFrom,
    optionFrom,
    toppingFrom,
    newItem,
    categoryOf,
    groupOut,
    buildCatalog,
    load,
    isDirty,
    itemChanged,
  };
}
