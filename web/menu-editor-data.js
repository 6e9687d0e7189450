// Menu editor (menu-editor.js): what it knows without a DOM. The allergen
// codes and tags the server accepts, with names to show; the presets of
// option groups; language names; the currency's minor-unit digits; prices
// typed in major units; and a stable JSON to compare catalogs.

/** The allergen codes the server knows (docs/api.md), with names to show. */
export const ALLERGENS = [
  // The EU's 14 (Regulation 1169/2011, Annex II); some are on Japan's list too.
  { code: 'gluten', name: 'Cereals with gluten', eu: true },
  { code: 'crustaceans', name: 'Crustaceans', eu: true },
  { code: 'egg', name: 'Egg', ja: '卵', eu: true },
  { code: 'fish', name: 'Fish', eu: true },
  { code: 'peanut', name: 'Peanut', ja: '落花生', eu: true },
  { code: 'soy', name: 'Soy', ja: '大豆', eu: true },
  { code: 'milk', name: 'Milk', ja: '乳', eu: true },
  { code: 'tree_nuts', name: 'Tree nuts', eu: true },
  { code: 'celery', name: 'Celery', eu: true },
  { code: 'mustard', name: 'Mustard', eu: true },
  { code: 'sesame', name: 'Sesame', ja: 'ごま', eu: true },
  { code: 'sulphites', name: 'Sulphites', eu: true },
  { code: 'lupin', name: 'Lupin', eu: true },
  { code: 'molluscs', name: 'Molluscs', eu: true },
  // The rest of Japan's 28.
  { code: 'wheat', name: 'Wheat', ja: '小麦' },
  { code: 'buckwheat', name: 'Buckwheat', ja: 'そば' },
  { code: 'shrimp', name: 'Shrimp', ja: 'えび' },
  { code: 'crab', name: 'Crab', ja: 'かに' },
  { code: 'walnut', name: 'Walnut', ja: 'くるみ' },
  { code: 'almond', name: 'Almond', ja: 'アーモンド' },
  { code: 'abalone', name: 'Abalone', ja: 'あわび' },
  { code: 'squid', name: 'Squid', ja: 'いか' },
  { code: 'salmon_roe', name: 'Salmon roe', ja: 'いくら' },
  { code: 'orange', name: 'Orange', ja: 'オレンジ' },
  { code: 'cashew', name: 'Cashew', ja: 'カシューナッツ' },
  { code: 'kiwi', name: 'Kiwi', ja: 'キウイフルーツ' },
  { code: 'beef', name: 'Beef', ja: '牛肉' },
  { code: 'salmon', name: 'Salmon', ja: 'さけ' },
  { code: 'mackerel', name: 'Mackerel', ja: 'さば' },
  { code: 'chicken', name: 'Chicken', ja: '鶏肉' },
  { code: 'banana', name: 'Banana', ja: 'バナナ' },
  { code: 'pork', name: 'Pork', ja: '豚肉' },
  { code: 'macadamia', name: 'Macadamia', ja: 'マカダミアナッツ' },
  { code: 'peach', name: 'Peach', ja: 'もも' },
  { code: 'yam', name: 'Yam', ja: 'やまいも' },
  { code: 'apple', name: 'Apple', ja: 'りんご' },
  { code: 'gelatin', name: 'Gelatin', ja: 'ゼラチン' },
];
export const ALLERGEN_NAMES = new Map(ALLERGENS.map((a) => [a.code, a.name]));

/** The tags the pages know; any other `[a-z0-9_]{1,32}` goes in "Other tags". */
export const COMMON_TAGS = [
  { tag: 'vegetarian', name: 'Vegetarian' },
  { tag: 'vegan', name: 'Vegan' },
  { tag: 'halal', name: 'Halal' },
  { tag: 'gluten_free', name: 'Gluten-free' },
  { tag: 'spicy', name: 'Spicy' },
];
export const COMMON_TAG_SET = new Set(COMMON_TAGS.map((t) => t.tag));

export const RULES = [
  { rule: 'required-one', label: 'Required, choose one', min: 1, max: 1 },
  { rule: 'optional-one', label: 'Optional, at most one', min: 0, max: 1 },
  { rule: 'optional-any', label: 'Optional, any number', min: 0, max: 'all' },
  { rule: 'required-any', label: 'Required, one or more', min: 1, max: 'all' },
  { rule: 'custom', label: 'Custom: set minimum and maximum' },
];

/** Offered in the "add a language" list; any BCP 47 tag may be typed. */
export const COMMON_LANGUAGES = ['en', 'ja', 'zh-Hans', 'zh-Hant', 'ko', 'fr', 'de', 'es', 'it', 'pt', 'th', 'vi', 'id'];
export const LANGUAGE_TAG = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

let languageNames = null;
try {
  languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
} catch {
  languageNames = null;
}
export function langName(code) {
  try {
    const name = languageNames && languageNames.of(code);
    return name && name !== code ? name : code;
  } catch {
    return code;
  }
}

export function currencyInfo(currency) {
  try {
    const fmt = new Intl.NumberFormat('en', { style: 'currency', currency });
    const digits = fmt.resolvedOptions().maximumFractionDigits;
    const symbol = fmt.formatToParts(0).find((p) => p.type === 'currency')?.value || currency;
    return { digits, symbol };
  } catch {
    return { digits: 2, symbol: currency };
  }
}

/** JSON with sorted keys: equal values, equal strings. */
export function stable(value) {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stable(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Integer minor units → the major units shown in a field ("12.50", "1200"). */
export function formatMinor(minor, digits) {
  if (typeof minor !== 'number' || !Number.isFinite(minor)) return '';
  return (minor / 10 ** digits).toFixed(digits);
}

/** Major units typed by a person ("12.5", "12,50", "1200") → integer minor units, or null. */
export function parseMajor(text, digits) {
  const s = String(text).trim().replace(',', '.');
  if (!/^\d+(\.\d*)?$/.test(s)) return null;
  const [whole, frac = ''] = s.split('.');
  if (frac.length > digits) return null;
  const minor = Number(whole) * 10 ** digits + (digits ? Number(frac.padEnd(digits, '0')) : 0);
  return Number.isSafeInteger(minor) ? minor : null;
}
