/**
 * guest-sheet.js: the item sheet of the guest page. A modal <dialog> where
 * the guest picks an item's options group by group (radio buttons for a
 * single choice, checkboxes up to the group's maximum), its toppings, a
 * line note and a quantity, and sees the line's total as it changes. "Add"
 * stays disabled, with the reason beside it (tied by aria-describedby),
 * while a required group is not chosen. Opened from the menu or, to change
 * a line, from the cart.
 *
 * Focus moves to the sheet's title when it opens and back to what opened it
 * when it closes; Escape, the close button and a tap beside the sheet close
 * it. The hooks are listed at the top of guest.js.
 */

import { $, el, chars, announce, photo } from './guest-dom.js';
import { MAX_QUANTITY, MAX_LINE_NOTE_CHARS, lineNoteProblem } from './order-sdk.js';
import {
  isRequired, maxOf, choiceProblems, unitPriceOf, orderedOptionIds,
} from './menu-rules.js';

/**
 * ctx: {
 *   t()            the current translator
 *   money(minor)   an amount as text
 *   item(id)       the menu item now (null once it is gone)
 *   toppings()     toppingId → topping
 *   soldOut(item)  whether the item cannot be ordered now
 *   closed()       whether the table is closed
 *   diet(item)     the node with the item's allergens and tags (or null)
 *   submit(line, {replaceKey})  adds the line (or replaces the cart line
 *                  replaceKey); returns true when it did
 * }
 */
export function createItemSheet(ctx) {
  const dialog = $('item-sheet');
  const form = $('sheet-form');
  let s = null; // {itemId, chosen: Set, toppings: Set, quantity, replaceKey, opener, shape}

  const t = (...a) => ctx.t()(...a);

  function shapeOf(item) {
    return JSON.stringify([
      item.name, item.description, item.imageUrl ?? null, item.price,
      (item.optionGroups ?? []).map((g) => [g.groupId, g.name, g.minChoices, g.maxChoices,
        g.options.map((o) => [o.optionId, o.name, o.price])]),
      item.maxToppings, (item.toppings ?? []).map((x) => x?.toppingId),
    ]);
  }

  function offeredToppings(item) {
    return item.maxToppings > 0 ? (item.toppings ?? []).filter(Boolean) : [];
  }

  function groupRule(group) {
    const max = maxOf(group);
    const min = group.minChoices ?? 0;
    if (max === 1) return isRequired(group) ? t('sheet.rule.requiredOne') : t('sheet.rule.optionalOne');
    if (min >= 1) {
      return min === max ? t('sheet.rule.requiredExactly', { n: min }) : t('sheet.rule.requiredRange', { min, max, n: max });
    }
    return t('sheet.rule.upTo', { n: max });
  }

  function priceText(price) {
    return price > 0 ? t('price.extra', { price: ctx.money(price) }) : '';
  }

  function renderGroup(item, group) {
    const single = maxOf(group) === 1;
    const name = `sheet-g-${group.groupId}`;
    const ruleId = `sheet-rule-${group.groupId}`;
    const rows = [];
    if (single && !isRequired(group)) {
      const id = `sheet-none-${group.groupId}`;
      rows.push(el('label', { class: 'check option', for: id },
        el('input', {
          type: 'radio', id, name, value: '', 'data-group-id': group.groupId, 'data-none': 'true',
        }),
        el('span', { class: 'option-name' }, t('sheet.none'))));
    }
    for (const option of group.options) {
      const id = `sheet-o-${option.optionId}`;
      rows.push(el('label', { class: 'check option', for: id, 'data-option-label': option.optionId },
        el('input', {
          type: single ? 'radio' : 'checkbox', id, name, value: option.optionId,
          'data-option-id': option.optionId, 'data-group-id': group.groupId,
        }),
        el('span', { class: 'option-name' },
          el('span', { class: 'option-label' }, option.name),
          el('span', { class: 'option-state', 'data-role': 'option-state' })),
        el('span', { class: 'option-price' }, priceText(option.price))));
    }
    return el('fieldset', {
      class: 'sheet-group',
      'data-group-id': group.groupId,
      'data-min': group.minChoices ?? 0,
      'data-max': maxOf(group),
      'data-required': String(isRequired(group)),
    },
    el('legend', {}, group.name, ' ',
      el('span', { class: `group-rule${isRequired(group) ? ' group-rule-required' : ''}`, id: ruleId }, groupRule(group))),
    rows);
  }

  function renderToppings(item) {
    const offered = offeredToppings(item);
    if (!offered.length) return null;
    const rule = item.maxToppings < offered.length ? t('toppings.upTo', { n: item.maxToppings }) : t('toppings.optional');
    return el('fieldset', { class: 'sheet-group', 'data-role': 'toppings', 'data-max': item.maxToppings },
      el('legend', {}, t('toppings.title'), ' ', el('span', { class: 'group-rule' }, rule)),
      offered.map((x) => {
        const id = `sheet-t-${x.toppingId}`;
        return el('label', { class: 'check option', for: id, 'data-topping-label': x.toppingId },
          el('input', { type: 'checkbox', id, value: x.toppingId, 'data-topping-id': x.toppingId }),
          el('span', { class: 'option-name' },
            el('span', { class: 'option-label' }, x.name),
            el('span', { class: 'option-state', 'data-role': 'option-state' })),
          el('span', { class: 'option-price' }, priceText(x.price)));
      }));
  }

  /** Builds the sheet's content for the item (choices are kept in `s`). */
  function build(item) {
    s.shape = shapeOf(item);
    $('sheet-title').textContent = item.name;
    $('sheet-photo').replaceChildren(...(item.imageUrl ? [photo(item.imageUrl, item.name, { className: 'photo-sheet', eager: true })] : []));
    $('sheet-photo').hidden = !item.imageUrl;
    $('sheet-price').textContent = ctx.money(item.price);
    $('sheet-desc').textContent = item.description ?? '';
    $('sheet-desc').hidden = !item.description;
    const diet = ctx.diet(item);
    $('sheet-diet').replaceChildren(...(diet ? [diet] : []));
    $('sheet-diet').hidden = !diet;
    $('sheet-groups').replaceChildren(...(item.optionGroups ?? []).map((g) => renderGroup(item, g)), ...[renderToppings(item)].filter(Boolean));
    update();
  }

  function currentLine() {
    const item = ctx.item(s.itemId);
    return {
      menuItemId: s.itemId,
      toppingIds: [...s.toppings].sort(),
      optionIds: item ? orderedOptionIds(item, [...s.chosen]) : [...s.chosen],
      note: $('sheet-note').value.trim(),
      quantity: s.quantity,
    };
  }

  /** Why Add is disabled now (texts), or [] when it is not. */
  function reasons(item) {
    if (ctx.closed()) return [t('sheet.reason.closed')];
    if (ctx.soldOut(item)) return [t('sheet.reason.soldOut')];
    const out = [];
    for (const p of choiceProblems(item, [...s.chosen])) {
      if (p.kind === 'min') out.push(chooseText(p.group));
      else if (p.kind === 'max') out.push(t('choice.max', { group: p.group.name, n: maxOf(p.group) }));
    }
    const noteProblem = lineNoteProblem($('sheet-note').value);
    if (noteProblem) out.push(t(`lineNote.${noteProblem}`, { n: MAX_LINE_NOTE_CHARS }));
    return out;
  }

  function chooseText(group) {
    const min = group.minChoices ?? 1;
    return min === 1 ? t('choice.one', { group: group.name }) : t('choice.min', { group: group.name, n: min });
  }

  /** Disabled states, sold-out marks, limits, the total and the reason, in place. */
  function update() {
    const item = ctx.item(s.itemId);
    if (!item) return;
    const closed = ctx.closed();
    // Choices that went away or sold out are dropped.
    const offered = new Map();
    for (const g of item.optionGroups ?? []) for (const o of g.options) offered.set(o.optionId, { o, g });
    for (const id of [...s.chosen]) {
      const hit = offered.get(id);
      if (!hit || hit.o.soldOut) {
        s.chosen.delete(id);
        if (hit) announce(t('sheet.optionGone', { option: hit.o.name }));
      }
    }
    const toppings = ctx.toppings();
    for (const id of [...s.toppings]) {
      const x = toppings.get(id);
      if (!x || x.soldOut || !offeredToppings(item).some((y) => y.toppingId === id)) s.toppings.delete(id);
    }

    for (const fs of form.querySelectorAll('fieldset.sheet-group[data-group-id]')) {
      const group = (item.optionGroups ?? []).find((g) => g.groupId === fs.dataset.groupId);
      if (!group) continue;
      const count = group.options.filter((o) => s.chosen.has(o.optionId)).length;
      const max = maxOf(group);
      const full = max > 1 && count >= max;
      fs.dataset.chosen = String(count);
      fs.dataset.satisfied = String(count >= (group.minChoices ?? 0) && count <= max);
      for (const input of fs.querySelectorAll('input')) {
        if (input.dataset.none) {
          input.checked = count === 0;
          input.disabled = closed;
          continue;
        }
        const o = offered.get(input.dataset.optionId)?.o;
        const soldOut = !o || o.soldOut;
        input.checked = s.chosen.has(input.dataset.optionId);
        input.disabled = closed || soldOut || (full && !input.checked);
        const label = input.closest('label');
        label.dataset.unavailable = String(input.disabled);
        label.dataset.soldOut = String(soldOut);
        label.querySelector('[data-role="option-state"]').textContent = soldOut
          ? ` ${t('option.soldOut')}`
          : (o.stock != null && o.stock <= 5 ? ` ${t('option.fewLeft', { n: o.stock })}` : '');
      }
    }
    const tfs = form.querySelector('fieldset[data-role="toppings"]');
    if (tfs) {
      const full = s.toppings.size >= item.maxToppings;
      for (const input of tfs.querySelectorAll('input[data-topping-id]')) {
        const x = toppings.get(input.dataset.toppingId);
        const soldOut = !x || x.soldOut;
        input.checked = s.toppings.has(input.dataset.toppingId);
        input.disabled = closed || soldOut || (full && !input.checked);
        const label = input.closest('label');
        label.dataset.unavailable = String(input.disabled);
        label.dataset.soldOut = String(soldOut);
        label.querySelector('[data-role="option-state"]').textContent = soldOut ? ` ${t('option.soldOut')}` : '';
      }
    }

    const n = chars($('sheet-note').value);
    $('sheet-note-count').textContent = t('count.chars', { n, max: MAX_LINE_NOTE_CHARS });
    $('sheet-qty').textContent = String(s.quantity);
    $('sheet-dec').disabled = s.quantity <= 1;
    $('sheet-inc').disabled = s.quantity >= MAX_QUANTITY;
    $('sheet-dec').setAttribute('aria-label', t('sheet.qtyLess'));
    $('sheet-inc').setAttribute('aria-label', t('sheet.qtyMore'));

    const line = currentLine();
    const unit = unitPriceOf(item, line, toppings);
    $('sheet-total').textContent = ctx.money(unit * s.quantity);
    $('sheet-total').dataset.amount = String(unit * s.quantity);

    const why = reasons(item);
    const add = $('sheet-add');
    add.disabled = why.length > 0;
    add.textContent = s.replaceKey ? t('sheet.update') : t('sheet.add');
    $('sheet-reason').textContent = why.join(' ');
    $('sheet-reason').hidden = why.length === 0;
  }

  function onChange(e) {
    if (!s) return;
    const input = e.target;
    const item = ctx.item(s.itemId);
    if (!item) return;
    if (input.dataset.toppingId) {
      if (input.checked) {
        if (s.toppings.size >= item.maxToppings) {
          input.checked = false;
          announce(t('toppings.limit', { n: item.maxToppings }));
        } else s.toppings.add(input.dataset.toppingId);
      } else s.toppings.delete(input.dataset.toppingId);
    } else if (input.dataset.groupId) {
      const group = (item.optionGroups ?? []).find((g) => g.groupId === input.dataset.groupId);
      if (!group) return;
      if (maxOf(group) === 1) {
        for (const o of group.options) s.chosen.delete(o.optionId);
        if (!input.dataset.none && input.checked) s.chosen.add(input.dataset.optionId);
      } else if (input.checked) {
        const count = group.options.filter((o) => s.chosen.has(o.optionId)).length;
        if (count >= maxOf(group)) {
          input.checked = false;
          announce(t('choice.limit', { group: group.name, n: maxOf(group) }));
        } else s.chosen.add(input.dataset.optionId);
      } else s.chosen.delete(input.dataset.optionId);
    }
    update();
  }

  function submit(e) {
    e.preventDefault();
    if (!s || $('sheet-add').disabled) return;
    const line = currentLine();
    if (ctx.submit(line, { replaceKey: s.replaceKey })) close();
  }

  function restoreFocus() {
    const opener = s?.opener;
    const itemId = s?.itemId;
    const edited = Boolean(s?.replaceKey);
    s = null;
    document.documentElement.classList.remove('sheet-open');
    if (opener?.isConnected && !opener.disabled) { opener.focus(); return; }
    // The cart was drawn anew (a changed line): its line's Change button;
    // else the item's name in the menu.
    const id = itemId && CSS.escape(itemId);
    const fallback = id && ((edited && document.querySelector(`#cart-lines li[data-item-id="${id}"] [data-action="edit"]`))
      || document.querySelector(`#menu-items [data-action="open"][data-item-id="${id}"]`));
    if (fallback) fallback.focus();
  }

  function close() {
    if (dialog.open) dialog.close();
  }

  form.addEventListener('change', onChange);
  form.addEventListener('submit', submit);
  $('sheet-note').addEventListener('input', () => { if (s) update(); });
  // One line: Enter in the note adds the line (when it can be added).
  $('sheet-note').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); if (!$('sheet-add').disabled) form.requestSubmit(); }
  });
  $('sheet-dec').addEventListener('click', () => {
    if (s && s.quantity > 1) { s.quantity -= 1; update(); }
  });
  $('sheet-inc').addEventListener('click', () => {
    if (s && s.quantity < MAX_QUANTITY) { s.quantity += 1; update(); }
  });
  $('sheet-close').addEventListener('click', close);
  // A tap on the backdrop (outside the sheet's box) closes it.
  dialog.addEventListener('click', (e) => {
    if (e.target !== dialog) return;
    const r = dialog.getBoundingClientRect();
    const inside = e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
    if (!inside) close();
  });
  dialog.addEventListener('close', restoreFocus);

  return {
    get isOpen() { return Boolean(s); },
    get itemId() { return s?.itemId ?? null; },

    /**
     * Opens the sheet for `itemId`. With `line` (a cart line), its choices,
     * note and quantity are the start, and Add replaces that line.
     */
    open(itemId, { line = null, opener = null, toppingIds = [] } = {}) {
      const item = ctx.item(itemId);
      if (!item) return;
      s = {
        itemId,
        chosen: new Set(line?.optionIds ?? []),
        toppings: new Set(line?.toppingIds ?? toppingIds),
        quantity: line?.quantity ?? 1,
        replaceKey: line ? line.key : null,
        opener: opener ?? document.activeElement,
        shape: null,
      };
      $('sheet-note').value = line?.note ?? '';
      $('sheet-note').setAttribute('maxlength', String(MAX_LINE_NOTE_CHARS));
      dialog.dataset.itemId = itemId;
      dialog.dataset.mode = line ? 'edit' : 'add';
      build(item);
      document.documentElement.classList.add('sheet-open');
      if (!dialog.open) dialog.showModal();
      dialog.scrollTop = 0;
      $('sheet-title').focus();
    },

    close,

    /** The menu changed (stock, a new menu, the language): follow it. */
    refresh() {
      if (!s) return;
      const item = ctx.item(s.itemId);
      if (!item) {
        announce(t('sheet.itemGone'));
        close();
        return;
      }
      if (shapeOf(item) !== s.shape) {
        const focusedId = document.activeElement?.id;
        build(item);
        if (focusedId && $(focusedId)) $(focusedId).focus();
      } else {
        update();
      }
    },

    /** The page's texts changed language. */
    retext() {
      if (!s) return;
      const item = ctx.item(s.itemId);
      if (item) build(item);
    },
  };
}
