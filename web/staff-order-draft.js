// Staff console: the draft of a staff-entered order, without DOM (Node
// tests it: web/test/staff-order-draft.test.mjs). Lines are kept as staff
// build them; the same item with the same choices and note is one line.
// What the menu says of each line (gone, sold out, a required choice
// missing — menu-rules.js judges as the guest sheet does) and what the
// server answered (OUT_OF_STOCK shortages, INVALID_OPTIONS and other field
// errors) are mapped back onto the lines, so a refusal loses nothing.

import { choiceProblems, maxOf, optionIndex, orderedOptionIds, unitPriceOf } from './menu-rules.js';
import {
  canonicalCart,
  lineNoteProblem,
  MAX_LINE_NOTE_CHARS,
  MAX_LINES,
  MAX_NOTE_CHARS,
  MAX_QUANTITY,
} from './order-sdk.js';
import { sentence, soldOutNow } from './staff-dom.js';

/** The identity of a line: item, toppings, options and note (quantity apart). */
export function lineKey({ menuItemId, toppingIds = [], optionIds = [], note = '' }) {
  return JSON.stringify([menuItemId, [...toppingIds].sort(), [...optionIds].sort(), String(note).trim()]);
}

/** The menu (GET …/menu) indexed: {items: Map id → item, toppings: Map id → topping, names: Map any id → name}. */
export function indexMenu(menu) {
  const items = new Map();
  const toppings = new Map();
  const names = new Map();
  for (const item of menu?.items ?? []) {
    items.set(item.menuItemId, item);
    names.set(item.menuItemId, item.name);
    for (const t of item.toppings ?? []) {
      toppings.set(t.toppingId, t);
      names.set(t.toppingId, t.name);
    }
    for (const group of item.optionGroups ?? []) for (const o of group.options ?? []) names.set(o.optionId, o.name);
  }
  return { items, toppings, names, currency: menu?.currency ?? 'USD' };
}

/** "Choose one Doneness", "Choose 2 Sides", "Choose at most 2 Sides". */
export function choiceText(problem) {
  const { group } = problem;
  if (problem.kind === 'max') return `Choose at most ${maxOf(group)} ${group.name}.`;
  const min = group.minChoices ?? 1;
  return min === 1 ? `Choose one ${group.name}.` : `Choose ${min} ${group.name}.`;
}

/** Why a line note cannot be sent, or ''. */
export function noteText(note) {
  const problem = lineNoteProblem(note);
  if (problem === 'too-long') return `The note is too long: at most ${MAX_LINE_NOTE_CHARS} characters.`;
  if (problem === 'line-break') return 'The note must be one line.';
  if (problem === 'invisible') return 'The note has characters the kitchen cannot show.';
  return '';
}

/**
 * What is wrong with a line on the menu as it is now (gone, sold out, a
 * choice missing or no longer offered, a note the server would refuse): []
 * when it can be sent. `menu` is indexMenu()'s answer.
 */
export function lineProblems(line, menu, now = Date.now()) {
  const item = menu.items.get(line.menuItemId);
  if (!item) return ['No longer on the menu.'];
  const out = [];
  if (soldOutNow(item, now)) out.push(`${item.name} is sold out.`);
  const offered = new Set((item.maxToppings > 0 ? item.toppings ?? [] : []).map((t) => t.toppingId));
  for (const id of line.toppingIds) {
    const topping = menu.toppings.get(id);
    if (!offered.has(id) || !topping) out.push('A topping is no longer offered.');
    else if (soldOutNow(topping, now)) out.push(`${topping.name} is sold out.`);
  }
  if (line.toppingIds.length > (item.maxToppings ?? 0)) out.push(`At most ${item.maxToppings} toppings.`);
  const index = optionIndex(item);
  for (const p of choiceProblems(item, line.optionIds)) {
    out.push(p.kind === 'unknown' ? 'A choice is no longer offered.' : choiceText(p));
  }
  for (const id of line.optionIds) {
    const option = index.get(id)?.option;
    if (option && soldOutNow(option, now)) out.push(`${option.name} is sold out.`);
  }
  const note = noteText(line.note);
  if (note) out.push(note);
  return out;
}

/**
 * A word of warning that does not stop the line: the menu counts fewer
 * left than it asks for (the count read a moment ago; the server judges
 * when it is sent, and its OUT_OF_STOCK names what ran short). '' if none.
 */
export function stockWarning(line, menu) {
  const item = menu.items.get(line.menuItemId);
  if (!item || !Number.isInteger(item.stock) || item.stock === 0 || item.stock >= line.quantity) return '';
  return `The menu says ${item.stock} left.`;
}

export class Draft {
  constructor() {
    /** [{key, menuItemId, quantity, toppingIds, optionIds, note}] in the order staff added them. */
    this.lines = [];
    this.note = '';
    /** The intent last sent (staff-order.js): its key goes once the draft changes. */
    this.pendingIntent = null;
  }

  get empty() {
    return this.lines.length === 0;
  }

  get quantity() {
    return this.lines.reduce((n, l) => n + l.quantity, 0);
  }

  /**
   * Adds a line, or its quantity to the same line already drafted (at most
   * MAX_QUANTITY). `item` orders the option ids as the menu does. Returns
   * the line's key, or null when the draft has MAX_LINES lines already.
   */
  add({ menuItemId, quantity = 1, toppingIds = [], optionIds = [], note = '' }, item) {
    const line = {
      menuItemId,
      quantity,
      toppingIds: [...new Set(toppingIds)].sort(),
      optionIds: item ? orderedOptionIds(item, [...new Set(optionIds)]) : [...new Set(optionIds)],
      note: String(note).trim(),
    };
    line.key = lineKey(line);
    const same = this.lines.find((l) => l.key === line.key);
    if (same) {
      same.quantity = Math.min(MAX_QUANTITY, same.quantity + quantity);
      return same.key;
    }
    if (this.lines.length >= MAX_LINES) return null;
    line.quantity = Math.min(MAX_QUANTITY, Math.max(1, quantity));
    this.lines.push(line);
    return line.key;
  }

  /** Sets a line's quantity (1–MAX_QUANTITY); 0 removes it. */
  setQuantity(key, quantity) {
    const line = this.lines.find((l) => l.key === key);
    if (!line) return;
    if (quantity <= 0) this.remove(key);
    else line.quantity = Math.min(MAX_QUANTITY, Math.round(quantity));
  }

  remove(key) {
    this.lines = this.lines.filter((l) => l.key !== key);
  }

  /** The staff-orders body, lines in draft order (the server's `items[i]` are these). */
  body() {
    return {
      items: this.lines.map(({ menuItemId, quantity, toppingIds, optionIds, note }) => ({
        menuItemId,
        quantity,
        toppingIds,
        optionIds,
        ...(note ? { note } : {}),
      })),
      note: this.note.trim(),
    };
  }

  /**
   * The intent of sending this draft to `sessionId`: the same draft sent
   * again (a retry, a second press after a lost answer) is the same intent,
   * so it goes under the same Idempotency-Key; any change makes a new one.
   */
  intent(sessionId) {
    const { items, note } = canonicalCart(this.body());
    return `staff-order:${sessionId}:${JSON.stringify({ items, note })}`;
  }

  /** The total at the menu's prices now (lines no longer priced count 0). */
  total(menu) {
    return this.lines.reduce((sum, l) => {
      const unit = unitPriceOf(menu.items.get(l.menuItemId), l, menu.toppings) ?? 0;
      return sum + unit * l.quantity;
    }, 0);
  }

  /** Why the draft cannot be sent as it is ('' when it can), besides its lines' problems. */
  problem() {
    if (this.empty) return 'Add at least one item.';
    if ([...this.note.trim()].length > MAX_NOTE_CHARS) return `The order note is too long: at most ${MAX_NOTE_CHARS} characters.`;
    return '';
  }
}

/**
 * The server's refusal of a staff order, mapped onto the draft's lines:
 * {general: text for the dialog, lines: Map key → text}. OUT_OF_STOCK
 * names what ran short (an item, a topping or an option: the lines using
 * it are marked); INVALID_OPTIONS and VALIDATION_FAILED name fields
 * `items[i]…` (the draft's ith line). `menu` names the ids (indexMenu()).
 */
export function refusalByLine(body, draft, menu) {
  const lines = new Map();
  const mark = (line, text) => lines.set(line.key, lines.has(line.key) ? `${lines.get(line.key)} ${text}` : text);
  const code = body?.code;
  const general = [];
  if (code === 'OUT_OF_STOCK' && Array.isArray(body.shortages)) {
    for (const s of body.shortages) {
      const name = menu.names.get(s.itemId) ?? 'An item';
      const text = s.available > 0 ? `${name}: only ${s.available} left (${s.requested} asked for).` : `${name} is sold out.`;
      const using = draft.lines.filter(
        (l) => l.menuItemId === s.itemId || l.toppingIds.includes(s.itemId) || l.optionIds.includes(s.itemId),
      );
      for (const line of using) mark(line, text);
      if (!using.length) general.push(text);
    }
    return { general: ['Not enough stock: nothing was sent.', ...general].join(' '), lines };
  }
  for (const e of Array.isArray(body?.errors) ? body.errors : []) {
    const m = /^items\[(\d+)\]/.exec(e.field ?? '');
    const line = m && draft.lines[Number(m[1])];
    const text = sentence(e.message);
    if (line) mark(line, text);
    else general.push(e.field ? `${e.field}: ${text}` : text);
  }
  const detail = sentence(body?.detail || body?.title || 'The order was refused.');
  return { general: [lines.size ? `${detail} Nothing was sent: fix the marked lines.` : detail, ...general].join(' '), lines };
}
