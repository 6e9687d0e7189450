// Menu editor (menu-editor.js): the languages panel (#menu-languages): the
// shop's languages as a draft to reorder (the first is the default), add to
// and remove from, saved on its own with PATCH /shops/{id}. Saved, they
// change the text fields of every form.

import { announce, ApiProblem, apiResponse, h, problemText } from './console.js';
import { COMMON_LANGUAGES, langName, LANGUAGE_TAG } from './menu-editor-data.js';
import { focusedKey, move, moveButton, restoreFocus } from './menu-editor-dom.js';

export function createLanguages(ed) {
  const { st, $, shopPath } = ed;

  function renderLanguages() {
    const list = $('menu-language-list');
    const draft = st.languagesDraft;
    list.replaceChildren(
      ...draft.map((lang, i) =>
        h(
          'li',
          { dataset: { lang } },
          h('span', { class: 'language-name' }, `${langName(lang)} `, h('span', { class: 'mono', text: `(${lang})` })),
          i === 0 ? h('span', { class: 'badge', text: 'default' }) : null,
          h(
            'span',
            { class: 'outline-moves' },
            moveButton('language-up', `Move ${langName(lang)} up`, i === 0, `lang-up:${lang}`),
            moveButton('language-down', `Move ${langName(lang)} down`, i === draft.length - 1, `lang-down:${lang}`),
            h('button', {
              type: 'button',
              class: 'btn btn-small btn-quiet',
              dataset: { action: 'language-remove', key: `lang-remove:${lang}` },
              'aria-label': `Remove ${langName(lang)}`,
              'aria-disabled': draft.length === 1 ? 'true' : null,
              text: 'Remove',
            }),
          ),
        ),
      ),
    );
    const same = draft.join(',') === st.languages.join(',');
    $('menu-languages-save').setAttribute('aria-disabled', same ? 'true' : 'false');
    $('menu-languages-summary').textContent = `Languages: ${st.languages.map((l) => `${langName(l)} (${l})`).join(', ')}${
      same ? '' : ' · changed, not saved'
    }`;
    const options = $('menu-language-options');
    if (!options.children.length) {
      options.append(...COMMON_LANGUAGES.map((l) => h('option', { value: l, text: langName(l) })));
    }
  }

  function languagesMessage(kind, text) {
    const el = $('menu-languages-message');
    el.dataset.kind = kind;
    el.textContent = text;
  }

  $('menu-language-list').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button || button.getAttribute('aria-disabled') === 'true') return;
    const lang = button.closest('li[data-lang]').dataset.lang;
    const draft = st.languagesDraft;
    const i = draft.indexOf(lang);
    if (button.dataset.action === 'language-up') move(draft, i, -1);
    else if (button.dataset.action === 'language-down') move(draft, i, 1);
    else if (button.dataset.action === 'language-remove' && draft.length > 1) draft.splice(i, 1);
    const key = focusedKey($('menu-language-list'));
    renderLanguages();
    if (button.dataset.action === 'language-remove') $('menu-language-input').focus();
    else restoreFocus($('menu-language-list'), key);
  });

  function addLanguage() {
    const input = $('menu-language-input');
    const tag = input.value.trim();
    input.removeAttribute('aria-invalid');
    if (!LANGUAGE_TAG.test(tag)) {
      languagesMessage('error', 'Enter a language code such as en, ja or zh-Hant.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    if (st.languagesDraft.some((l) => l.toLowerCase() === tag.toLowerCase())) {
      languagesMessage('error', `${langName(tag)} is already in the list.`);
      input.focus();
      return;
    }
    st.languagesDraft.push(tag);
    input.value = '';
    languagesMessage('info', `${langName(tag)} added. Save the languages to use it.`);
    renderLanguages();
  }
  $('menu-language-add').addEventListener('click', addLanguage);
  $('menu-language-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      addLanguage();
    }
  });

  $('menu-languages-save').addEventListener('click', async () => {
    const button = $('menu-languages-save');
    if (button.getAttribute('aria-disabled') === 'true') return;
    const languages = [...st.languagesDraft];
    button.setAttribute('aria-disabled', 'true');
    languagesMessage('info', 'Saving the languages…');
    try {
      const { data: shop } = await apiResponse(shopPath, { method: 'PATCH', body: { languages } });
      const saved = Array.isArray(shop?.languages) && shop.languages.length ? shop.languages : null;
      if (!saved) {
        // The server answered without the field: it did not take the change.
        throw new Error('the server answered without the shop’s languages, so they were not changed');
      }
      const oldDefault = st.languages[0];
      st.languages = saved.map(String);
      st.languagesDraft = [...st.languages];
      let note = '';
      if (st.languages[0] !== oldDefault && st.languages.includes(oldDefault) && ed.pinPlainTexts(oldDefault)) {
        note = ` Texts stored without a language were ${langName(oldDefault)}, the default until now: they are marked ${langName(oldDefault)} in the editor. Save the menu to keep that.`;
      }
      languagesMessage('ok', `Saved. The menu is now edited in ${st.languages.map(langName).join(', ')}.${note}`);
      announce('Languages saved.');
      ed.renderAll();
    } catch (err) {
      if (err.status !== 401) {
        const why =
          err instanceof ApiProblem ? `${problemText(err)} (HTTP ${err.status} ${err.code})` : problemText(err);
        languagesMessage('error', `The languages were not saved: ${why}`);
        announce(`The languages were not saved: ${problemText(err)}`);
      }
    } finally {
      renderLanguages();
    }
  });

  return { renderLanguages };
}
