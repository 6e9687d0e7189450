// Menu editor (menu-editor.js): an item's option groups, part of the item form:
// each group (fieldset[data-group-uid]) with its name, its rule (one of the
// RULES presets, or a custom minimum and maximum) and its options, each with
// a name and an extra price; adding, moving and removing groups and options.

import { announce, h } from './console.js';
import { RULES } from './menu-editor-data.js';
import { focusIn, move } from './menu-editor-dom.js';

export function createGroups(ed) {
  function groupFields(item, p) {
    return h(
      'section',
      { class: 'groups', 'aria-labelledby': `${p}-groups-title`, dataset: { errorKey: `${p}:optionGroups:` } },
      h('h4', { id: `${p}-groups-title`, class: 'section-title', text: 'Option groups' }),
      h('p', {
        class: 'hint',
        text: 'Choices guests make for this dish, e.g. doneness (required, one) or extra sides (optional, any).',
      }),
      item.groups.map((g, gi) => groupFieldset(item, g, gi)),
      h('button', {
        type: 'button',
        class: 'btn',
        dataset: { action: 'add-group', key: 'add-group' },
        onclick: () => {
          const g = ed.groupFrom({ options: [] });
          g.orig = null;
          g.name = ed.newText();
          g.rule = 'required-one';
          g.options.push(newOption());
          item.groups.push(g);
          ed.changed();
          ed.renderDetail();
          focusIn(`[data-group-uid="${g.uid}"] [data-field=group-name]`);
        },
        text: '+ Add an option group',
      }),
    );
  }

  function newOption() {
    const o = ed.optionFrom({});
    o.orig = null;
    o.name = ed.newText();
    o.priceInput = ed.formatMinor(0);
    return o;
  }

  function groupFieldset(item, g, gi) {
    const gp = `g:${g.uid}`;
    const gname = ed.displayText(g.name) || `group ${gi + 1}`;
    const legendId = ed.fieldId();
    const ruleId = ed.fieldId();
    const minId = ed.fieldId();
    const maxId = ed.fieldId();
    const act = (action, label, fn, disabled = false) =>
      h('button', {
        type: 'button',
        class: 'btn btn-small',
        dataset: { action, key: `${action}:${g.uid}` },
        'aria-label': `${label} ${gname}`,
        'aria-disabled': disabled ? 'true' : null,
        onclick: () => {
          if (disabled) return;
          fn();
          ed.changed();
          ed.renderDetail();
          if (action === 'remove-group') {
            focusIn('[data-action="add-group"]');
            announce(`Option group ${gname} removed.`);
          }
        },
        text: label,
      });
    return h(
      'fieldset',
      {
        class: 'group',
        'aria-labelledby': legendId,
        dataset: { groupUid: g.uid, groupId: g.orig?.groupId || '', errorKey: `${gp}::` },
      },
      h('legend', { id: legendId, text: `Option group ${gi + 1}: ${ed.displayText(g.name) || 'new'}` }),
      h(
        'div',
        { class: 'group-tools' },
        act('group-up', 'Move up', () => move(item.groups, gi, -1), gi === 0),
        act('group-down', 'Move down', () => move(item.groups, gi, 1), gi === item.groups.length - 1),
        act('remove-group', 'Remove', () => item.groups.splice(gi, 1)),
      ),
      h(
        'div',
        { class: 'group-grid' },
        ed.textFields({ text: g.name, label: 'Group name', field: 'group-name', errorPrefix: gp }),
        h(
          'div',
          { class: 'field' },
          h('label', { for: ruleId, text: 'Guests must choose' }),
          h(
            'select',
            {
              id: ruleId,
              dataset: { field: 'group-rule', key: `rule:${g.uid}`, errorKey: `${gp}:rule:` },
              onchange: (event) => {
                const before = ed.groupOut(g);
                g.rule = event.target.value;
                if (g.rule === 'custom') {
                  g.minInput = String(before.minChoices ?? 0);
                  g.maxInput = String(before.maxChoices ?? g.options.length);
                }
                ed.changed();
                ed.renderDetail();
              },
            },
            RULES.map((r) => h('option', { value: r.rule, selected: r.rule === g.rule, text: r.label })),
          ),
        ),
      ),
      g.rule === 'custom'
        ? h(
            'div',
            { class: 'group-grid' },
            h(
              'div',
              { class: 'field field-inline' },
              h('label', { for: minId, text: 'At least' }),
              h('input', {
                id: minId,
                type: 'number',
                class: 'num-input',
                min: '0',
                step: '1',
                value: g.minInput,
                dataset: { field: 'min-choices', key: `min:${g.uid}`, errorKey: `${gp}:minChoices:` },
                oninput: (event) => {
                  g.minInput = event.target.value;
                  ed.clearErrorsOf(event.target);
                  ed.changed();
                },
              }),
            ),
            h(
              'div',
              { class: 'field field-inline' },
              h('label', { for: maxId, text: 'At most' }),
              h('input', {
                id: maxId,
                type: 'number',
                class: 'num-input',
                min: '1',
                step: '1',
                value: g.maxInput,
                dataset: { field: 'max-choices', key: `max:${g.uid}`, errorKey: `${gp}:maxChoices:` },
                oninput: (event) => {
                  g.maxInput = event.target.value;
                  ed.clearErrorsOf(event.target);
                  ed.changed();
                },
              }),
            ),
          )
        : null,
      h(
        'div',
        { class: 'options-box', dataset: { errorKey: `${gp}:options:` } },
        h('h5', { class: 'options-title', text: 'Options' }),
        h(
          'ol',
          { class: 'options' },
          g.options.map((o, oi) => optionRow(g, o, oi)),
        ),
      ),
      h('button', {
        type: 'button',
        class: 'btn btn-small',
        dataset: { action: 'add-option', key: `add-option:${g.uid}` },
        'aria-label': `Add an option to ${gname}`,
        onclick: () => {
          const o = newOption();
          g.options.push(o);
          ed.changed();
          ed.renderDetail();
          focusIn(`[data-option-uid="${o.uid}"] [data-field=option-name]`);
        },
        text: '+ Add option',
      }),
    );
  }

  function optionRow(g, o, oi) {
    const op = `o:${o.uid}`;
    const oname = ed.displayText(o.name) || `option ${oi + 1}`;
    const act = (action, text, label, fn, disabled = false) =>
      h('button', {
        type: 'button',
        class: 'btn btn-small btn-icon',
        dataset: { action, key: `${action}:${o.uid}` },
        'aria-label': label,
        title: label,
        'aria-disabled': disabled ? 'true' : null,
        onclick: () => {
          if (disabled) return;
          fn();
          ed.changed();
          ed.renderDetail();
          if (action === 'remove-option') {
            focusIn(`[data-key="add-option:${CSS.escape(g.uid)}"]`);
            announce(`${oname} removed.`);
          }
        },
        text,
      });
    return h(
      'li',
      { class: 'option-row', dataset: { optionUid: o.uid, optionId: o.orig?.optionId || '', errorKey: `${op}::` } },
      h('span', { class: 'option-number', 'aria-hidden': 'true', text: `${oi + 1}.` }),
      ed.textFields({
        text: o.name,
        label: `Option ${oi + 1} name`,
        field: 'option-name',
        errorPrefix: op,
        labelHidden: ed.textLangs(o.name).length === 1,
      }),
      ed.priceField({
        value: o.priceInput,
        label: `Option ${oi + 1} extra price`,
        field: 'option-price',
        errorKey: `${op}:price:`,
        optional: true,
        labelHidden: true,
        plus: true,
        onInput: (v) => {
          o.priceInput = v;
        },
      }),
      h(
        'span',
        { class: 'option-tools' },
        act('option-up', '↑', `Move ${oname} up`, () => move(g.options, oi, -1), oi === 0),
        act('option-down', '↓', `Move ${oname} down`, () => move(g.options, oi, 1), oi === g.options.length - 1),
        act('remove-option', '✕', `Remove ${oname}`, () => g.options.splice(oi, 1)),
      ),
    );
  }

  return { groupFields };
}
