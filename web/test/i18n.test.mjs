// Unit tests of web/i18n.js and the message files in web/i18n/.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import {
  matchLanguage, pickLanguage, messageChain, languageName, loadMessages, createTranslator,
  MESSAGE_LANGUAGES, DEFAULT_LANGUAGE,
} from '../i18n.js';
import MESSAGE_FILES from '../i18n/index.js';
import { ALLERGENS, KNOWN_TAGS } from '../menu-rules.js';

const I18N_DIR = new URL('../i18n/', import.meta.url);

async function messages(tag) {
  return JSON.parse(await readFile(new URL(`${tag}.json`, I18N_DIR), 'utf8'));
}

/** A fetch that reads the message files from disk (Node's fetch has no file: URLs). */
function diskFetch(calls = []) {
  return async (url) => {
    calls.push(String(url));
    try {
      const text = await readFile(fileURLToPath(url), 'utf8');
      return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
    } catch {
      return new Response('not found', { status: 404 });
    }
  };
}

const placeholders = (text) => {
  const all = typeof text === 'string' ? [text] : Object.values(text);
  return [...new Set(all.flatMap((t) => [...t.matchAll(/\{(\w+)\}/g)].map((m) => m[1])))].sort();
};

describe('message files', () => {
  test('the index lists exactly the files there are, English included', async () => {
    const files = (await readdir(I18N_DIR)).filter((f) => f.endsWith('.json')).map((f) => f.replace(/\.json$/, ''));
    assert.deepEqual([...files].sort(), [...MESSAGE_LANGUAGES].sort());
    assert.ok(MESSAGE_LANGUAGES.includes(DEFAULT_LANGUAGE));
    assert.equal(MESSAGE_FILES.ja, '日本語');
    assert.equal(MESSAGE_FILES.en, 'English');
  });

  for (const tag of MESSAGE_LANGUAGES.filter((t) => t !== 'en')) {
    test(`${tag}.json has every key of en.json, with the same placeholders, and no other`, async () => {
      const en = await messages('en');
      const other = await messages(tag);
      assert.deepEqual(Object.keys(other).filter((k) => !(k in en)), [], 'keys English does not have');
      for (const [key, text] of Object.entries(en)) {
        assert.ok(key in other, `${tag}.json lacks ${key}`);
        const theirs = other[key];
        assert.equal(typeof theirs, typeof text, `${key}: a string or plural object in both`);
        if (typeof text === 'object') assert.ok('other' in theirs, `${key}: a plural needs "other"`);
        // Plural forms may leave {n} out ("one" says "a dish"), so compare the union.
        assert.deepEqual(placeholders(theirs), placeholders(text), `${key}: placeholders`);
      }
    });
  }

  test('every allergen code and known tag has a name in English', async () => {
    const en = await messages('en');
    for (const { code } of ALLERGENS) assert.ok(en[`allergen.${code}`], `allergen.${code}`);
    for (const { tag } of KNOWN_TAGS) assert.ok(en[`tag.${tag}`], `tag.${tag}`);
  });

  test('the Japanese file is Japanese (no English text left in it)', async () => {
    const en = await messages('en');
    const ja = await messages('ja');
    const same = Object.keys(en).filter((k) => {
      const text = JSON.stringify(ja[k]).replace(/\{\w+\}/g, '');
      return /[a-z]{3,}/i.test(text) && JSON.stringify(ja[k]) === JSON.stringify(en[k]);
    });
    assert.deepEqual(same, []);
  });

  test('guest.html names only keys that en.json has', async () => {
    const en = await messages('en');
    const html = await readFile(new URL('../guest.html', import.meta.url), 'utf8');
    const keys = [...html.matchAll(/data-i18n(?:-aria-label|-placeholder)?="([^"]+)"/g)].map((m) => m[1]);
    assert.ok(keys.length > 20);
    for (const k of keys) assert.ok(k in en, k);
  });

  test('the guest modules name only keys that en.json has', async () => {
    const en = await messages('en');
    for (const file of ['guest.js', 'guest-page.js', 'guest-menu.js', 'guest-cart.js', 'guest-orders.js', 'guest-sheet.js']) {
      const code = await readFile(new URL(`../${file}`, import.meta.url), 'utf8');
      for (const [, key] of code.matchAll(/\bt\('([a-zA-Z0-9_.-]+)'/g)) assert.ok(key in en, `${file}: ${key}`);
    }
  });
});

describe('choosing the language', () => {
  test('matchLanguage: the same tag, else the same primary language', () => {
    assert.equal(matchLanguage('ja', ['en', 'ja']), 'ja');
    assert.equal(matchLanguage('ja-JP', ['en', 'ja']), 'ja');
    assert.equal(matchLanguage('EN-gb', ['ja', 'en-US']), 'en-US');
    assert.equal(matchLanguage('zh-TW', ['zh-TW', 'zh-CN']), 'zh-TW');
    assert.equal(matchLanguage('fr', ['en', 'ja']), null);
    assert.equal(matchLanguage(null, ['en']), null);
  });

  test('pickLanguage: the stored choice, else the browser\'s, else the shop\'s first', () => {
    assert.equal(pickLanguage({ offered: ['ja', 'en'], stored: 'en', preferred: ['ja-JP'] }), 'en');
    assert.equal(pickLanguage({ offered: ['ja', 'en'], stored: 'fr', preferred: ['de', 'en-GB'] }), 'en');
    assert.equal(pickLanguage({ offered: ['ja', 'en'], preferred: ['de'] }), 'ja');
    assert.equal(pickLanguage({ offered: ['ja', 'en'], preferred: ['ja-JP', 'en'] }), 'ja');
  });

  test('a shop without languages is English', () => {
    assert.equal(pickLanguage({ offered: undefined, preferred: ['ja'] }), 'en');
    assert.equal(pickLanguage({ offered: [], stored: 'ja' }), 'en');
  });

  test('messageChain: the most specific file first, English last', () => {
    assert.deepEqual(messageChain('ja'), ['ja', 'en']);
    assert.deepEqual(messageChain('ja-JP'), ['ja', 'en']);
    assert.deepEqual(messageChain('fr'), ['en']);
    assert.deepEqual(messageChain('en-US'), ['en']);
    assert.deepEqual(messageChain('zh-Hant-TW', ['zh-Hant', 'zh', 'en']), ['zh-Hant', 'zh', 'en']);
    assert.deepEqual(messageChain('not a tag!'), ['en']);
  });

  test('languageName: each language in its own words', () => {
    assert.equal(languageName('ja'), '日本語');
    assert.equal(languageName('en'), 'English');
    assert.equal(languageName('fr'), 'Français');
    assert.equal(languageName('xx-not-a-language-!!'), 'xx-not-a-language-!!');
  });
});

describe('translating', () => {
  test('loadMessages reads the chain, and t falls back to English for a missing key', async () => {
    const calls = [];
    const bundles = await loadMessages('ja-JP', { fetch: diskFetch(calls) });
    assert.deepEqual(bundles.map((b) => b.lang), ['ja', 'en']);
    assert.equal(calls.length, 2);
    const t = createTranslator('ja-JP', [{ lang: 'ja', messages: { 'a.b': 'ジャ' } }, { lang: 'en', messages: { 'a.b': 'en', 'c.d': 'only English' } }]);
    assert.equal(t('a.b'), 'ジャ');
    assert.equal(t('c.d'), 'only English');
    assert.equal(t('missing.key'), 'missing.key');
    assert.equal(t.has('c.d'), true);
    assert.equal(t.has('missing.key'), false);
    assert.equal(t.lang, 'ja-JP');
  });

  test('a message file that cannot be read leaves English', async () => {
    const bundles = await loadMessages('ja', {
      fetch: async (url) => (String(url).endsWith('ja.json') ? new Response('', { status: 500 }) : diskFetch()(url)),
    });
    const t = createTranslator('ja', bundles);
    assert.equal(t('cart.place'), 'Place order');
  });

  test('placeholders and plurals', async () => {
    const en = createTranslator('en', [{ lang: 'en', messages: await messages('en') }]);
    const ja = createTranslator('ja', [{ lang: 'ja', messages: await messages('ja') }]);
    assert.equal(en('cart.dishes', { n: 1 }), '1 dish');
    assert.equal(en('cart.dishes', { n: 3 }), '3 dishes');
    assert.equal(ja('cart.dishes', { n: 3 }), '3品');
    assert.equal(en('choice.one', { group: 'Doneness' }), 'Doneness: choose one.');
    assert.equal(ja('choice.one', { group: '焼き加減' }), '焼き加減を1つお選びください。');
    assert.equal(en('item.fewLeft', {}), 'Only {n} left', 'a missing param stays visible');
    assert.equal(en('order.placed', { n: 12 }), 'Order placed — ticket 12');
  });
});
