// Menu editor (menu-editor.js): texts per language. A display text is kept
// as it was stored (a string, or {lang: text}) with what was typed over it;
// the shop's languages decide its fields (one plain field while the shop has
// one language, one per language with several), and a text nobody touched is
// sent back exactly as it was. Kept apart so that every form shows and saves
// texts the same way. Also: pinning plain texts to the old default language
// when the default changes.

export function createTexts(ed) {
  const { st } = ed;

  function multi() {
    return st.languages.length > 1;
  }
  function defaultLang() {
    return st.languages[0];
  }

  /** A display text as stored: a string, or an object of language → string. */
  function textFrom(value) {
    if (value !== null && typeof value === 'object') {
      return { orig: value, kind: 'map', map: { ...value }, dirty: false };
    }
    return {
      orig: value,
      kind: 'plain',
      plain: value === undefined || value === null ? '' : String(value),
      plainLang: defaultLang(),
      dirty: false,
    };
  }
  function newText() {
    const t = textFrom(undefined);
    if (multi()) Object.assign(t, { kind: 'map', map: {} });
    return t;
  }
  /** The language a plain string is taken to be in. */
  function plainLang(t) {
    return st.languages.includes(t.plainLang) ? t.plainLang : defaultLang();
  }
  /** The languages a text is edited in: the shop's, then any other it holds. */
  function textLangs(t) {
    if (t.kind === 'plain' && !multi()) return [''];
    const langs = [...st.languages];
    if (t.kind === 'map') for (const k of Object.keys(t.map)) if (!langs.includes(k)) langs.push(k);
    return langs;
  }
  function getText(t, lang) {
    if (t.kind === 'plain') {
      if (!multi() || lang === '') return t.plain;
      return lang === plainLang(t) ? t.plain : '';
    }
    return t.map[lang] ?? '';
  }
  function setText(t, lang, value) {
    if (t.kind === 'plain' && (multi() && lang !== '')) {
      const base = t.plain;
      const was = plainLang(t);
      t.kind = 'map';
      t.map = base === '' ? {} : { [was]: base };
    }
    if (t.kind === 'plain') t.plain = value;
    else t.map[lang] = value;
    t.dirty = true;
  }
  /** The text to show in lists: the default language, else any. */
  function displayText(t) {
    if (t.kind === 'plain') return t.plain;
    const d = t.map[defaultLang()];
    if (d && d.trim()) return d;
    return Object.values(t.map).find((v) => v && v.trim()) || '';
  }
  /** What a PUT carries: the stored value when untouched. Undefined = leave out. */
  function textOut(t, { optional = false } = {}) {
    if (!t.dirty) return t.orig;
    if (t.kind === 'plain') return optional && t.plain === '' && t.orig === undefined ? undefined : t.plain;
    // Languages left empty are left out (the menu falls back to the default,
    // then to any). A required text with no language at all is sent as an
    // empty default, so that the server's "must not be empty" lands there.
    const out = {};
    for (const lang of textLangs(t)) {
      const v = t.map[lang] ?? '';
      if (v.trim() !== '') out[lang] = v;
    }
    if (Object.keys(out).length) return out;
    if (optional) return t.orig === undefined ? undefined : '';
    return { [defaultLang()]: '' };
  }

  /**
   * The default language changed: a text stored as a plain string was
   * written in the old one, so it becomes {old: text} (an unsaved change).
   * Resolves to whether any text changed.
   */
  function pinPlainTexts(lang) {
    let pinned = false;
    const pin = (t) => {
      if (t.kind !== 'plain' || t.plain === '') return;
      t.kind = 'map';
      t.map = { [lang]: t.plain };
      t.dirty = true;
      pinned = true;
    };
    for (const item of st.items.values()) {
      pin(item.name);
      pin(item.description);
      for (const g of item.groups) {
        pin(g.name);
        for (const o of g.options) pin(o.name);
      }
    }
    for (const c of st.categories) pin(c.text);
    for (const t of [...st.toppings, ...st.retiredToppings]) pin(t.name);
    return pinned;
  }

  return { textFrom, newText, textLangs, getText, setText, displayText, textOut, pinPlainTexts };
}
