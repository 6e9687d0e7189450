// guest-cart.js: the guest page's cart: its lines (item, toppings,
// options, line note, quantity), kept per table in localStorage, what
// stops a line from being ordered, and the cart section.

import { lineNoteProblem, MAX_LINES, MAX_QUANTITY, MAX_NOTE_CHARS } from './order-sdk.js';
import {
  choiceProblems, unitPriceOf, optionIndex, maxOf,
} from './menu-rules.js';
import { $, el, chars, announce } from './guest-dom.js';
import {
  state, t, money, list, dishes, itemSoldOut, chooseText,
} from './guest-page.js';
import { updateAvailability } from './guest-menu.js';

export function lineKey(line) {
  return [
    line.menuItemId,
    [...line.toppingIds].sort().join(','),
    [...(line.optionIds ?? [])].sort().join(','),
    encodeURIComponent(line.note ?? ''),
  ].join('|');
}

function cartStorageKey() {
  return `ordergate.cart.${state.sessionId}`;
}

/** Carts of other tables left over from earlier visits (older than a day). */
function purgeOldCarts() {
  try {
    const dayAgo = Date.now() - 24 * 60 * 60 * 1000;
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const key = localStorage.key(i);
      if (!key?.startsWith('ordergate.cart.') || key === cartStorageKey()) continue;
      let at = 0;
      try { at = JSON.parse(localStorage.getItem(key))?.at ?? 0; } catch { /* damaged: drop */ }
      if (!(at > dayAgo)) localStorage.removeItem(key);
    }
  } catch { /* storage blocked */ }
}

/** Saved lines, checked and merged as the page keeps them. */
function readLines(saved) {
  const lines = [];
  for (const l of Array.isArray(saved) ? saved : []) {
    if (!l || typeof l.menuItemId !== 'string' || !Number.isInteger(l.quantity)
      || l.quantity < 1 || l.quantity > MAX_QUANTITY || !Array.isArray(l.toppingIds)) continue;
    const line = {
      menuItemId: l.menuItemId,
      toppingIds: l.toppingIds.map(String).sort(),
      optionIds: Array.isArray(l.optionIds) ? [...new Set(l.optionIds.map(String))] : [],
      note: typeof l.note === 'string' && !lineNoteProblem(l.note) ? l.note.trim() : '',
      quantity: l.quantity,
    };
    const same = lines.find((x) => lineKey(x) === lineKey(line));
    if (same) same.quantity = Math.min(MAX_QUANTITY, same.quantity + line.quantity);
    else lines.push(line);
  }
  return lines.slice(0, MAX_LINES);
}

export function loadCart() {
  purgeOldCarts();
  try {
    const saved = JSON.parse(localStorage.getItem(cartStorageKey()) ?? 'null');
    if (saved && Array.isArray(saved.lines)) {
      state.cart.lines = readLines(saved.lines);
      state.cart.note = typeof saved.note === 'string' ? saved.note.slice(0, MAX_NOTE_CHARS) : '';
    }
    // An order whose outcome was still unknown when the page went away.
    const u = saved?.unconfirmed;
    const lines = readLines(u?.lines);
    if (lines.length && typeof u.note === 'string') {
      state.unconfirmed = {
        lines, note: u.note, allowRepeat: Boolean(u.allowRepeat), fromCart: u.fromCart !== false,
      };
    }
  } catch { /* no saved cart */ }
  $('note').value = state.cart.note;
}

export function saveCart() {
  try {
    const empty = state.cart.lines.length === 0 && !state.cart.note && !state.unconfirmed;
    if ((state.closed && !state.accessEnded) || empty) localStorage.removeItem(cartStorageKey());
    else {
      localStorage.setItem(cartStorageKey(), JSON.stringify({
        lines: state.cart.lines, note: state.cart.note, unconfirmed: state.unconfirmed, at: Date.now(),
      }));
    }
  } catch { /* storage full or blocked: the cart lives in memory */ }
}

function unitPrice(line) {
  return unitPriceOf(state.items.get(line.menuItemId), line, state.toppings);
}

export function lineName(line) {
  return state.items.get(line.menuItemId)?.name ?? t('cart.unavailableDish');
}

export function toppingNames(ids) {
  return ids.map((id) => state.toppings.get(id)?.name ?? t('cart.unavailableTopping'));
}

export function optionNames(line) {
  const item = state.items.get(line.menuItemId);
  const index = optionIndex(item);
  const known = [...index.keys()];
  return [...(line.optionIds ?? [])]
    .sort((a, b) => known.indexOf(a) - known.indexOf(b))
    .map((id) => index.get(id)?.option.name ?? t('cart.unavailableOption'));
}

/** Why each line cannot be ordered as it is (lineKey → text). */
export function cartProblems() {
  const problems = new Map();
  if (!state.menu) return problems;
  const demand = new Map();
  for (const line of state.cart.lines) {
    for (const id of [line.menuItemId, ...line.toppingIds, ...(line.optionIds ?? [])]) {
      demand.set(id, (demand.get(id) ?? 0) + line.quantity);
    }
  }
  for (const line of state.cart.lines) {
    const key = lineKey(line);
    const item = state.items.get(line.menuItemId);
    if (!item) { problems.set(key, t('line.gone')); continue; }
    if (itemSoldOut(item)) { problems.set(key, t('line.soldOut')); continue; }
    if (line.toppingIds.length > item.maxToppings) {
      problems.set(key, t('line.maxToppings', { n: item.maxToppings }));
      continue;
    }
    const gone = line.toppingIds.find((id) => !item.toppings.some((x) => x.toppingId === id));
    if (gone) { problems.set(key, t('line.toppingGone')); continue; }
    const soldOutTopping = line.toppingIds.map((id) => state.toppings.get(id)).find((x) => x?.soldOut);
    if (soldOutTopping) { problems.set(key, t('line.toppingSoldOut', { name: soldOutTopping.name })); continue; }
    const choice = choiceProblems(item, line.optionIds ?? []);
    if (choice.some((p) => p.kind === 'unknown')) { problems.set(key, t('line.optionGone')); continue; }
    if (choice.length) {
      const p = choice[0];
      const reason = p.kind === 'min' ? chooseText(p.group) : t('choice.max', { group: p.group.name, n: maxOf(p.group) });
      problems.set(key, t('line.choice', { reason }));
      continue;
    }
    const index = optionIndex(item);
    const soldOutOption = (line.optionIds ?? []).map((id) => index.get(id)?.option).find((o) => o?.soldOut);
    if (soldOutOption) { problems.set(key, t('line.optionSoldOut', { name: soldOutOption.name })); continue; }
    for (const id of [line.menuItemId, ...line.toppingIds, ...(line.optionIds ?? [])]) {
      const thing = state.items.get(id) ?? state.toppings.get(id) ?? index.get(id)?.option;
      if (thing?.stock != null && demand.get(id) > thing.stock) {
        problems.set(key, t('line.fewLeft', { n: thing.stock, name: thing.name }));
        break;
      }
    }
  }
  return problems;
}

/**
 * Puts a line in the cart (merged with an equal one), or in place of the
 * line `replaceKey`. Returns whether it did.
 */
export function putLine(line, { replaceKey = null } = {}) {
  const item = state.items.get(line.menuItemId);
  if (!item || itemSoldOut(item) || state.closed) return false;
  const clean = {
    menuItemId: line.menuItemId,
    toppingIds: [...(line.toppingIds ?? [])].sort(),
    optionIds: [...(line.optionIds ?? [])],
    note: (line.note ?? '').trim(),
    quantity: line.quantity ?? 1,
  };
  const lines = state.cart.lines;
  const replaced = replaceKey ? lines.findIndex((l) => lineKey(l) === replaceKey) : -1;
  const existing = lines.find((l, i) => i !== replaced && lineKey(l) === lineKey(clean));
  if (existing) {
    if (existing.quantity + clean.quantity > MAX_QUANTITY) {
      announce(t('announce.maxQty', { n: MAX_QUANTITY }));
      return false;
    }
    existing.quantity += clean.quantity;
    if (replaced >= 0) lines.splice(replaced, 1);
  } else if (replaced >= 0) {
    lines.splice(replaced, 1, clean);
  } else {
    if (lines.length >= MAX_LINES) {
      announce(t('announce.maxLines', { n: MAX_LINES }));
      return false;
    }
    lines.push(clean);
  }
  cartChanged();
  const extras = [...toppingNames(clean.toppingIds), ...optionNames(clean)];
  const count = lines.reduce((n, l) => n + l.quantity, 0);
  const name = clean.quantity > 1 ? t('cart.times', { n: clean.quantity, name: item.name }) : item.name;
  if (replaced >= 0) announce(t('announce.updated', { name: item.name }));
  else if (extras.length) announce(t('announce.addedWith', { name, extras: list(extras), count: dishes(count) }));
  else announce(t('announce.added', { name, count: dishes(count) }));
  return true;
}

/** The quick Add of an item without option groups (with its ticked toppings). */
export function addToCart(itemId) {
  const item = state.items.get(itemId);
  if (!item || itemSoldOut(item) || state.closed) return;
  const toppingIds = [...(state.selected.get(itemId) ?? [])]
    .filter((id) => item.toppings.some((x) => x.toppingId === id) && !state.toppings.get(id)?.soldOut)
    .sort();
  if (putLine({ menuItemId: itemId, toppingIds, optionIds: [], note: '', quantity: 1 })) {
    state.selected.delete(itemId);
    updateAvailability();
  }
}

export function changeLine(key, action, button) {
  const i = state.cart.lines.findIndex((l) => lineKey(l) === key);
  if (i < 0) return;
  const line = state.cart.lines[i];
  const name = lineName(line);
  if (action === 'edit') {
    if (state.items.has(line.menuItemId)) state.sheet.open(line.menuItemId, { line: { ...line, key }, opener: button });
    return;
  }
  if (action === 'inc') {
    if (line.quantity < MAX_QUANTITY) line.quantity += 1;
    announce(t('announce.qty', { name, n: line.quantity }));
  } else if (action === 'dec' && line.quantity > 1) {
    line.quantity -= 1;
    announce(t('announce.qty', { name, n: line.quantity }));
  } else {
    state.cart.lines.splice(i, 1);
    announce(t('announce.removed', { name }));
  }
  cartChanged();
}

function cartChanged() {
  saveCart();
  $('order-again').hidden = true;
  state.lastDuplicate = null;
  renderCart();
}

export function renderCart() {
  const focus = focusedCartControl();
  const problems = cartProblems();
  const lines = state.cart.lines;
  let total = 0;
  const nodes = lines.map((line) => {
    const key = lineKey(line);
    const price = unitPrice(line);
    if (price != null) total += price * line.quantity;
    const name = lineName(line);
    const problem = problems.get(key);
    const options = optionNames(line);
    const editable = state.items.has(line.menuItemId) && !state.closed;
    return el('li', {
      class: 'cart-line',
      'data-line-key': key,
      'data-item-id': line.menuItemId,
      'data-quantity': line.quantity,
      'data-option-ids': [...(line.optionIds ?? [])].sort().join(','),
    },
    el('div', {},
      el('span', { class: 'line-name' }, name),
      options.length ? el('span', { class: 'line-options', 'data-role': 'options' }, list(options)) : null,
      line.toppingIds.length ? el('span', { class: 'line-toppings' }, t('cart.toppings', { list: list(toppingNames(line.toppingIds)) })) : null,
      line.note ? el('span', { class: 'line-note', 'data-role': 'line-note' }, t('cart.lineNote', { note: line.note })) : null),
    el('span', { class: 'line-total', 'data-role': 'line-total' }, price == null ? '' : money(price * line.quantity)),
    el('div', { class: 'line-controls' },
      el('div', { class: 'qty', role: 'group', 'aria-label': t('cart.qtyOf', { name }) },
        el('button', {
          type: 'button', class: 'btn', 'data-action': 'dec',
          'aria-label': line.quantity > 1 ? t('cart.less', { name }) : t('cart.removeLabel', { name }),
        }, '−'),
        el('span', { class: 'qty-value', 'data-role': 'qty' }, String(line.quantity)),
        el('button', {
          type: 'button', class: 'btn', 'data-action': 'inc', 'aria-label': t('cart.more', { name }),
          disabled: line.quantity >= MAX_QUANTITY,
        }, '+')),
      el('span', { class: 'line-links' },
        editable ? el('button', {
          type: 'button', class: 'btn-link', 'data-action': 'edit', 'aria-label': t('cart.editLabel', { name }),
        }, t('cart.edit')) : null,
        el('button', { type: 'button', class: 'btn-link', 'data-action': 'remove', 'aria-label': t('cart.removeLabel', { name }) }, t('cart.remove')))),
    problem ? el('p', { class: 'line-warning', 'data-role': 'warning' }, problem) : null);
  });
  $('cart-lines').replaceChildren(...nodes);
  const count = lines.reduce((n, l) => n + l.quantity, 0);
  $('cart-empty').hidden = lines.length > 0;
  $('cart-summary').hidden = lines.length === 0;
  $('cart-total').textContent = money(total);

  const blocked = problems.size > 0;
  const cartProblem = $('cart-problem');
  cartProblem.hidden = !blocked;
  cartProblem.textContent = blocked ? t('cart.problem') : '';

  const confirm = $('confirm');
  const sending = state.submitting !== null;
  // An order whose outcome is unknown can always be sent again (as it was).
  const resend = !sending && state.unconfirmed !== null;
  confirm.disabled = state.closed || (!sending && !resend && (lines.length === 0 || blocked || !state.menu));
  confirm.setAttribute('aria-busy', String(sending));
  confirm.textContent = sending
    ? t('cart.sending')
    : resend ? t('cart.resend')
      : lines.length ? t('cart.placeTotal', { total: money(total) }) : t('cart.place');

  const navCount = $('nav-cart-count');
  navCount.hidden = count === 0;
  navCount.textContent = String(count);
  $('cart-bar-count').textContent = dishes(count);
  $('cart-bar-total').textContent = money(total);
  updateCartBar();
  restoreCartFocus(focus);
}

function focusedCartControl() {
  const a = document.activeElement;
  if (!a || !$('cart-lines').contains(a)) return null;
  const li = a.closest('[data-line-key]');
  const index = [...$('cart-lines').children].indexOf(li);
  return { key: li?.dataset.lineKey, action: a.dataset.action, index };
}

function restoreCartFocus(f) {
  if (!f) return;
  // The sheet opened from this line holds the focus; it gives it back itself.
  if (state.sheet?.isOpen) return;
  const rows = [...$('cart-lines').children];
  const row = rows.find((r) => r.dataset.lineKey === f.key) ?? rows[Math.min(f.index, rows.length - 1)];
  const target = row?.querySelector(`[data-action="${f.action}"]:not(:disabled)`)
    ?? row?.querySelector('[data-action="remove"]');
  if (target) target.focus();
  else $('cart').focus();
}

let cartInView = false;
export function setCartInView(inView) {
  cartInView = inView;
  updateCartBar();
}

export function updateCartBar() {
  $('cart-bar').hidden = state.cart.lines.length === 0 || cartInView || state.closed;
}

export function updateNoteCount() {
  const n = chars($('note').value);
  $('note-count').textContent = t('count.chars', { n, max: MAX_NOTE_CHARS });
}
