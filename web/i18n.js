/**
 * i18n.js: the pages' own texts in the guest's language.
 *
 * Texts live in message files, one per language: web/i18n/<tag>.json, a
 * flat object of key → text. web/i18n/index.js lists the files there are
 * (tag → the language's own name). English (en.json) has every key and is
 * the fallback for a key or a language that has no text.
 *
 * A text may hold placeholders, `{name}`, filled from the params given to
 * t(key, params). A text that depends on a number is an object of plural
 * categories (Intl.PluralRules: zero, one, two, few, many, other), chosen
 * by the param `n`: {"one": "{n} dish", "other": "{n} dishes"}. A missing
 * category falls back to `other`.
 *
 * No DOM and no browser global at import: Node imports it for tests.
 *
 *   const messages = await loadMessages('ja');   // ja, then en under it
 *   const t = createTranslator('ja', messages);
 *   t('cart.title')                 → "ご注文"
 *   t('cart.dishes', { n: 3 })      → "3品"
 *   pickLanguage({ offered: ['ja', 'en'], stored: null, preferred: ['en-GB'] }) → 'en'
 */

import MESSAGE_FILES from './i18n/index.js';

export const DEFAULT_LANGUAGE = 'en';

/** The tags there are message files for. */
export const MESSAGE_LANGUAGES = Object.freeze(Object.keys(MESSAGE_FILES));

function canonicalTag(tag) {
  try {
    return Intl.getCanonicalLocales(String(tag))[0] ?? null;
  } catch {
    return null;
  }
}

function primary(tag) {
  return String(tag).split('-')[0].toLowerCase();
}

/**
 * The entry of `offered` that best serves `wanted`: the same tag (case
 * aside), else one with the same primary language ("ja-JP" → "ja", "en" →
 * "en-US"), else null.
 */
export function matchLanguage(wanted, offered) {
  if (!wanted) return null;
  const w = String(wanted).toLowerCase();
  const list = (offered ?? []).map(String);
  const exact = list.find((o) => o.toLowerCase() === w);
  if (exact) return exact;
  return list.find((o) => primary(o) === primary(w)) ?? null;
}

/**
 * The language to show: the guest's stored choice if the shop still offers
 * it, else the first of the browser's languages the shop offers, else the
 * shop's first language. `offered` empty or missing means ["en"].
 */
export function pickLanguage({ offered, stored = null, preferred = [] } = {}) {
  const list = Array.isArray(offered) && offered.length ? offered.map(String) : [DEFAULT_LANGUAGE];
  if (stored) {
    const exact = list.find((o) => o.toLowerCase() === String(stored).toLowerCase());
    if (exact) return exact;
  }
  for (const p of preferred ?? []) {
    const m = matchLanguage(p, list);
    if (m) return m;
  }
  return list[0];
}

/**
 * The message files that serve `tag`, most specific first, English last:
 * "ja-JP" → ["ja", "en"] (when there is ja.json but no ja-JP.json), "fr" →
 * ["en"].
 */
export function messageChain(tag, available = MESSAGE_LANGUAGES) {
  const chain = [];
  const add = (t) => {
    const hit = available.find((a) => a.toLowerCase() === String(t).toLowerCase());
    if (hit && !chain.includes(hit)) chain.push(hit);
  };
  if (tag) {
    const c = canonicalTag(tag) ?? String(tag);
    const parts = c.split('-');
    for (let i = parts.length; i > 0; i--) add(parts.slice(0, i).join('-'));
  }
  add(DEFAULT_LANGUAGE);
  return chain;
}

/** The name of a language in that language: "日本語", "English", "français". */
export function languageName(tag) {
  const listed = Object.entries(MESSAGE_FILES).find(([k]) => k.toLowerCase() === String(tag).toLowerCase());
  if (listed) return listed[1];
  try {
    const name = new Intl.DisplayNames([tag], { type: 'language' }).of(tag);
    if (name && name !== tag) return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
  } catch { /* an unusable tag, or no Intl.DisplayNames */ }
  return String(tag);
}

const defaultFetch = (...args) => globalThis.fetch(...args);
const caches = new WeakMap(); // fetch function → Map(tag → Promise<object>)

/** One message file (cached per fetch function); an unreadable one counts as empty. */
function loadFile(tag, fetchFn) {
  if (!caches.has(fetchFn)) caches.set(fetchFn, new Map());
  const loaded = caches.get(fetchFn);
  if (!loaded.has(tag)) {
    const url = new URL(`./i18n/${encodeURIComponent(tag)}.json`, import.meta.url);
    const p = Promise.resolve()
      .then(() => fetchFn(url, { headers: { Accept: 'application/json' } }))
      .then((res) => (res.ok ? res.json() : {}))
      .catch(() => {
        loaded.delete(tag); // try again next time
        return {};
      });
    loaded.set(tag, p);
  }
  return loaded.get(tag);
}

/**
 * The messages for `tag`: its chain of message files (see messageChain),
 * more specific files first. Resolves to [{lang, messages}, ...].
 */
export async function loadMessages(tag, { fetch: fetchFn = defaultFetch } = {}) {
  const chain = messageChain(tag);
  const files = await Promise.all(chain.map((t) => loadFile(t, fetchFn)));
  return chain.map((lang, i) => ({ lang, messages: files[i] ?? {} }));
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => (params[name] == null ? whole : String(params[name])));
}

/**
 * t(key, params) for `lang` over `bundles` ([{lang, messages}], most
 * specific first). A key no bundle has gives the key itself, so a missing
 * text shows up instead of vanishing. `t.lang` is the language, `t.has(key)`
 * whether some bundle has the key.
 */
export function createTranslator(lang, bundles) {
  const rules = new Map();
  const pluralOf = (bundleLang, n) => {
    if (!rules.has(bundleLang)) {
      let r;
      try { r = new Intl.PluralRules(bundleLang); } catch { r = new Intl.PluralRules('en'); }
      rules.set(bundleLang, r);
    }
    return rules.get(bundleLang).select(Number(n));
  };
  function lookup(key) {
    for (const b of bundles) {
      const v = b.messages?.[key];
      if (typeof v === 'string' || (v && typeof v === 'object')) return { value: v, lang: b.lang };
    }
    return null;
  }
  function t(key, params = {}) {
    const hit = lookup(key);
    if (!hit) return key;
    let text = hit.value;
    if (typeof text === 'object') {
      const n = params.n ?? params.count ?? 0;
      text = text[pluralOf(hit.lang, n)] ?? text.other ?? Object.values(text)[0] ?? key;
    }
    return fill(String(text), params);
  }
  t.lang = lang;
  t.has = (key) => lookup(key) !== null;
  return t;
}
