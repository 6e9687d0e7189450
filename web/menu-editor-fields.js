// Menu editor (menu-editor.js): the fields every form is made of: a display
// text's input(s), one per language when the shop has several
// (menu-editor-texts.js), and a price field in the shop's currency; with the
// ids, labels, hints and error keys (data-error-key) they share.

import { h } from './console.js';
import { langName } from './menu-editor-data.js';

export function createFields(ed) {
  const { st } = ed;

  let fieldSeq = 0;
  function fieldId() {
    return `menu-f-${(fieldSeq += 1)}`;
  }

  /** Input(s) of one display text: one plain field, or one per language. */
  function textFields({ text, label, field, errorPrefix, multiline = false, hint, labelHidden = false, onInput }) {
    const langs = ed.textLangs(text);
    const make = (lang, labelText, hideLabel) => {
      const id = fieldId();
      const attrs = {
        id,
        class: multiline ? 'text-input textarea' : 'text-input',
        lang: lang || null,
        autocomplete: 'off',
        dataset: { field, lang, key: `${errorPrefix}:${field}:${lang}`, errorKey: `${errorPrefix}:${field}:${lang}` },
        oninput: (event) => {
          ed.setText(text, lang, event.target.value);
          ed.clearErrorsOf(event.target);
          if (onInput) onInput();
          ed.changed();
        },
      };
      const input = multiline
        ? h('textarea', { ...attrs, rows: '2', text: ed.getText(text, lang) })
        : h('input', { ...attrs, type: 'text', value: ed.getText(text, lang) });
      const hintId = hint && !lang ? `${id}-hint` : null;
      if (hintId) input.setAttribute('aria-describedby', hintId);
      return h(
        'div',
        { class: 'field' },
        h('label', { for: id, class: hideLabel ? 'visually-hidden' : null, text: labelText }),
        input,
        hintId ? h('p', { id: hintId, class: 'hint', text: hint }) : null,
      );
    };
    if (langs.length === 1 && langs[0] === '') return make('', label, labelHidden);
    const legendId = fieldId();
    return h(
      'fieldset',
      {
        class: 'lang-fields',
        'aria-labelledby': legendId,
        dataset: { errorKey: `${errorPrefix}:${field}:` },
      },
      h('legend', { id: legendId, class: labelHidden ? 'visually-hidden' : null, text: label }),
      langs.map((lang, i) => {
        const extra = !st.languages.includes(lang) ? ' (not one of the shop’s languages)' : i === 0 ? ' · default' : '';
        const el = make(lang, `${langName(lang)} (${lang})${extra}`, false);
        el.querySelector('label').append(h('span', { class: 'visually-hidden', text: ` · ${label}` }));
        return el;
      }),
      hint ? h('p', { class: 'hint', text: hint }) : null,
    );
  }

  function priceField({ value, label, field, errorKey, onInput, optional = false, labelHidden = false, plus = false }) {
    const id = fieldId();
    const hintId = `${id}-hint`;
    return h(
      'div',
      { class: 'field field-price' },
      h('label', { for: id, class: labelHidden ? 'visually-hidden' : null, text: label }),
      h(
        'div',
        { class: 'price-box' },
        h('span', { class: 'price-symbol', 'aria-hidden': 'true', text: `${plus ? '+' : ''}${st.symbol}` }),
        h('input', {
          id,
          type: 'text',
          inputmode: st.digits ? 'decimal' : 'numeric',
          class: 'price-input',
          autocomplete: 'off',
          value,
          placeholder: optional ? ed.formatMinor(0) : ed.priceExample(),
          'aria-describedby': labelHidden ? null : hintId,
          dataset: { field, key: errorKey, errorKey },
          oninput: (event) => {
            onInput(event.target.value);
            ed.clearErrorsOf(event.target);
            ed.changed();
          },
        }),
      ),
      labelHidden
        ? null
        : h('p', {
            id: hintId,
            class: 'hint',
            text: st.digits
              ? `In ${st.currency}, e.g. ${ed.priceExample()}.`
              : `In ${st.currency}, whole units, e.g. ${ed.priceExample()}.`,
          }),
    );
  }

  return { fieldId, textFields, priceField };
}
