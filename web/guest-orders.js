// guest-orders.js: placing the order (through order-sdk.js, which owns
// the exactly-once rules), what the guest is told about each outcome and
// refusal, and the table's orders.

import { compareInstants, lineNoteProblem, MAX_LINE_NOTE_CHARS } from './order-sdk.js';
import { optionIndex, maxOf } from './menu-rules.js';
import { $, el, announce } from './guest-dom.js';
import {
  state, hooks, t, money, timeOf, list, chooseText, setStatus, focusStatus, problemText,
} from './guest-page.js';
import { refreshMenu } from './guest-menu.js';
import {
  lineKey, lineName, cartProblems, renderCart, saveCart, updateNoteCount,
} from './guest-cart.js';

function requestFrom(lines, note) {
  return {
    items: lines.map((l) => {
      const out = { menuItemId: l.menuItemId, quantity: l.quantity, toppingIds: [...l.toppingIds] };
      if (l.optionIds?.length) out.optionIds = [...l.optionIds];
      if (l.note) out.note = l.note;
      return out;
    }),
    note,
  };
}

function copyLines(lines) {
  return lines.map((l) => ({ ...l, toppingIds: [...l.toppingIds], optionIds: [...(l.optionIds ?? [])] }));
}

/**
 * Sends the cart (or `repeat`, a cart already placed, once more). While an
 * earlier submit's outcome is unknown (NOT_CONFIRMED), that one goes first,
 * as it was, so it keeps its Idempotency-Key and cannot be placed twice,
 * whatever was added to the cart since: `auto` is such a resend made by the
 * page itself once the connection is back.
 */
export async function placeOrder({ repeat = null, auto = false } = {}) {
  if (state.closed) return;
  let sent;
  if (state.unconfirmed) {
    sent = state.unconfirmed;
  } else {
    if (auto) return;
    const lines = repeat ? repeat.lines : state.cart.lines;
    const note = repeat ? repeat.note : state.cart.note.trim();
    if (!repeat) {
      if (lines.length === 0) return;
      if (cartProblems().size > 0) {
        setStatus('error', t('order.blocked'));
        return;
      }
    }
    sent = { lines: copyLines(lines), note, allowRepeat: Boolean(repeat), fromCart: !repeat };
  }
  const promise = state.client.submit(requestFrom(sent.lines, sent.note), { allowRepeat: sent.allowRepeat });
  // A tap while the same cart is being sent joins it: the first tap's
  // handler reports the outcome.
  if (promise === state.submitting) return;
  // Otherwise a new submit starts, unless the SDK refused it (ORDER_PENDING).
  if (state.submitting === null) {
    state.submitting = promise;
    stopResume();
    setStatus(auto ? 'retrying' : 'sending', auto ? t('order.resuming') : t('order.sending'));
    renderCart();
  }
  try {
    const result = await promise;
    settleUnconfirmed(sent);
    if (sent.fromCart) removeSent(sent);
    upsertOrder(result.order);
    const order = result.order;
    const ticket = order?.ticketNumber;
    state.lastPlaced = order?.orderId ? { orderId: order.orderId, ticket } : null;
    const about = { ticket, orderId: order?.orderId, orderStatus: order?.status };
    if (result.alreadyPlaced) {
      setStatus('success', t('order.already', { n: ticket }), about);
      state.lastDuplicate = sent;
      $('order-again').hidden = false;
    } else {
      setStatus('success', t('order.placed', { n: ticket }), about);
      $('order-again').hidden = true;
    }
    // The kitchen may have moved it on already (a replay of an old answer).
    if (order?.orderId) followStatus(state.orders.get(order.orderId) ?? order);
    focusStatus();
  } catch (err) {
    if (err?.code === 'NOT_CONFIRMED') {
      keepUnconfirmed(sent, { again: auto });
    } else if (err?.code !== 'ORDER_PENDING') {
      settleUnconfirmed(sent);
    }
    handleOrderError(err, sent);
  } finally {
    if (state.submitting === promise) {
      state.submitting = null;
      renderCart();
    }
  }
}

// ── an order whose outcome is unknown ───────────────────────────────────

/** NOT_CONFIRMED: the key stays with the SDK; the page keeps the cart it belongs to and waits for the connection. */
function keepUnconfirmed(sent, { again = false } = {}) {
  state.unconfirmed = sent;
  // A resend of its own that failed too: the page waits longer each time.
  state.resumeRounds = again ? state.resumeRounds + 1 : 0;
  saveCart();
  armResume(Math.min(state.resumeRounds, PROBE_DELAYS_MS.length - 1));
}

function settleUnconfirmed(sent) {
  if (state.unconfirmed !== sent) return;
  state.unconfirmed = null;
  state.resumeRounds = 0;
  stopResume();
  saveCart();
}

const PROBE_DELAYS_MS = [3000, 5000, 10000, 20000, 30000];

/**
 * Until the connection is back: a light read of the table now and then
 * (besides the stream coming back live, the browser going online and the
 * page being shown again, which guest.js reports through resumeOrder).
 */
function armResume(step = 0) {
  stopResume();
  state.resumeTimer = setTimeout(async () => {
    state.resumeTimer = null;
    if (!state.unconfirmed || state.submitting || state.closed) return;
    try {
      await state.client.getSession();
    } catch {
      armResume(Math.min(step + 1, PROBE_DELAYS_MS.length - 1));
      return;
    }
    resumeOrder();
  }, PROBE_DELAYS_MS[step]);
}

function stopResume() {
  clearTimeout(state.resumeTimer);
  state.resumeTimer = null;
}

/**
 * The connection is (probably) back: send the unconfirmed order again, by
 * itself, with its key. A replay or the table's order list settles it; if
 * the connection is still down, it waits again.
 */
export function resumeOrder() {
  if (!state.unconfirmed || state.submitting || state.closed || !state.client) return;
  placeOrder({ auto: true });
}

/** After a reload: an order left unconfirmed is sent again once the page is live, if its key is still kept. */
export function restoreUnconfirmed() {
  const u = state.unconfirmed;
  if (!u) return;
  if (!state.client.pendingKeyFor(requestFrom(u.lines, u.note), { allowRepeat: u.allowRepeat })) {
    // Its key is gone (expired, or settled in another tab): the cart is
    // still there to be placed, but it is no longer sent by itself.
    state.unconfirmed = null;
    saveCart();
    return;
  }
  setStatus('retrying', t('order.unconfirmedKept'));
  armResume();
}

// ── the order placed last, followed ─────────────────────────────────────

/**
 * The status box keeps telling about the order this page placed last as
 * the kitchen moves it along (accepted, preparing, ready, served), and says
 * so plainly when the restaurant cancels it. It leaves the box alone once
 * it tells about something else (a new order being sent, an error).
 */
function followStatus(order) {
  const last = state.lastPlaced;
  if (!last || order?.orderId !== last.orderId) return false;
  const box = $('status');
  if (box.dataset.orderId !== order.orderId || box.dataset.orderStatus === order.status) return false;
  const ticket = order.ticketNumber ?? last.ticket;
  const about = { ticket, orderId: order.orderId, orderStatus: order.status };
  if (order.status === 'cancelled') {
    setStatus('cancelled', t('order.cancelled', { n: ticket }), about);
    $('order-again').hidden = true;
  } else if (order.status !== 'placed' && t.has(`order.now.${order.status}`)) {
    setStatus('success', t(`order.now.${order.status}`, { n: ticket }), about);
  } else {
    box.dataset.orderStatus = order.status;
    hooks.statusChanged();
  }
  return true;
}

/** Takes what was ordered out of the cart (dishes added meanwhile stay). */
function removeSent(sent) {
  for (const s of sent.lines) {
    const line = state.cart.lines.find((l) => lineKey(l) === lineKey(s));
    if (line) line.quantity -= s.quantity;
  }
  state.cart.lines = state.cart.lines.filter((l) => l.quantity > 0);
  if (state.cart.note.trim() === sent.note) {
    state.cart.note = '';
    $('note').value = '';
    updateNoteCount();
  }
  saveCart();
  renderCart();
}

/** The sent line an error's field ("items[2].optionIds[0]") names. */
function lineOfField(field, sent) {
  const m = /^items\[(\d+)\]/.exec(field ?? '');
  return m ? sent?.lines[Number(m[1])] ?? null : null;
}

/** One INVALID_OPTIONS error as the guest reads it: "Steak: Doneness: choose one". */
function optionErrorText(e, sent) {
  const line = lineOfField(e.field, sent);
  const item = line ? state.items.get(line.menuItemId) : null;
  const name = line ? lineName(line) : null;
  let reason = null;
  const group = e.groupId && item ? item.optionGroups.find((g) => g.groupId === e.groupId) : null;
  if (group) {
    // The page's copy of the group may be older than the server's: its
    // words only when they explain the refusal.
    const chosen = (line.optionIds ?? []).filter((id) => group.options.some((o) => o.optionId === id)).length;
    if (chosen < (group.minChoices ?? 0)) reason = chooseText(group);
    else if (chosen > maxOf(group)) reason = t('choice.max', { group: group.name, n: maxOf(group) });
  } else if (e.groupId === null && line) {
    reason = t('choice.unknown');
  }
  // The server's own words when the page cannot say it better.
  reason ??= e.message;
  return name ? t('order.lineProblem', { name, reason }) : reason;
}

function handleOrderError(err, sent) {
  const code = err?.code;
  const error = (text) => setStatus('error', text, { code });
  switch (code) {
    case 'ORDER_PENDING':
      setStatus('info', t('order.pending'), { code });
      break;
    case 'NOT_CONFIRMED':
      error(t('order.notConfirmed'));
      break;
    case 'ACCESS_ENDED':
      error(problemText(err));
      hooks.setAccessEnded?.();
      break;
    case 'OUT_OF_STOCK': {
      const parts = (err.shortages ?? []).map((s) => {
        const thing = state.items.get(s.itemId) ?? state.toppings.get(s.itemId) ?? state.options.get(s.itemId)?.option;
        const name = thing?.name ?? t('order.anItem');
        return s.available > 0 ? t('order.shortLeft', { name, n: s.available }) : t('order.shortNone', { name });
      });
      error(t('order.outOfStock', { list: parts.length ? list(parts) : t('order.someDishes') }));
      refreshMenu();
      break;
    }
    case 'INVALID_OPTIONS': {
      // Final: the choices break the item's groups as the server has them
      // now (the menu changed since it was read). Say what, read the menu
      // again: the cart then marks the lines to change.
      const errors = err.errors?.length ? err.errors : [{ field: null, groupId: undefined, message: err.message }];
      const show = () => {
        const parts = [...new Set(errors.map((e) => optionErrorText(e, sent)).filter(Boolean))];
        error(t('order.invalidOptions', { list: parts.join(' ') }));
      };
      show();
      const shown = $('status').textContent;
      // Said again in the page's words once the menu as the server has it is read.
      refreshMenu().then(() => { if ($('status').textContent === shown) show(); });
      break;
    }
    case 'SESSION_CLOSED':
      error(t('order.closed'));
      hooks.setClosed();
      break;
    case 'VALIDATION_FAILED': {
      const noteError = (err.errors ?? []).find((e) => /^items\[\d+\]\.note$/.test(e.field ?? ''));
      if (noteError) {
        const line = lineOfField(noteError.field, sent);
        error(t('order.badLineNote', { name: line ? lineName(line) : '', reason: noteError.message }));
        break;
      }
      error(t('order.menuChanged'));
      refreshMenu();
      break;
    }
    case 'UNKNOWN_MENU_ITEM':
    case 'ITEM_UNAVAILABLE':
    case 'INVALID_TOPPING':
      error(t('order.menuChanged'));
      refreshMenu();
      break;
    case 'PIN_INVALID':
    case 'PIN_LOCKED':
    case 'SESSION_RATE_LIMITED':
    case 'CATALOG_NOT_READY':
      error(problemText(err));
      break;
    case 'INVALID_CART': {
      const line = err.line != null ? sent?.lines[err.line] : null;
      if (err.reason === 'line-note' && line) {
        error(t('order.badLineNote', { name: lineName(line), reason: t(`lineNote.${lineNoteProblem(line.note) ?? 'invisible'}`, { n: MAX_LINE_NOTE_CHARS }) }));
      } else {
        error(t('order.invalidCart'));
      }
      break;
    }
    default:
      error(t('order.failed', { message: err?.message ?? t('order.unknownError') }));
  }
}

export function onProgress(ev) {
  if (state.submitting === null) return;
  if (ev.phase === 'waiting') {
    setStatus('retrying', t('order.slow'));
  } else if (ev.phase === 'reconciling') {
    setStatus('retrying', t('order.checking'));
  }
}

// ── the table's orders ──────────────────────────────────────────────────

export async function refreshOrders() {
  try {
    const orders = await state.client.listOrders({ limit: 50 });
    for (const o of orders) upsertOrder(o, { quiet: true, render: false });
    renderOrders();
  } catch { /* the stream still brings updates; the next reconnect retries */ }
}

function statusLabel(status) {
  return t.has(`status.${status}`) ? t(`status.${status}`) : status;
}

export function upsertOrder(order, { quiet = false, render = true } = {}) {
  if (!order?.orderId || (order.sessionId && order.sessionId !== state.sessionId)) return;
  const known = state.orders.get(order.orderId);
  if (known && (known.version ?? 0) > (order.version ?? 0)) return;
  state.orders.set(order.orderId, order);
  // The status box says it itself (a live region) for the order placed last.
  const told = followStatus(order);
  if (!quiet && !told && known && known.status !== order.status) {
    announce(t('announce.ticketStatus', { n: order.ticketNumber, status: statusLabel(order.status) }));
  }
  if (render) renderOrders();
}

function renderOrder(o) {
  // Placed orders carry the kitchen's (the shop's default) language; the
  // menu's names, when it still has the dish, are in the guest's.
  const lines = (o.items ?? []).map((l) => {
    const item = state.items.get(l.menuItemId);
    const index = optionIndex(item);
    const extras = [
      ...(l.options ?? []).map((x) => index.get(x.optionId)?.option.name ?? x.name),
      ...(l.toppings ?? []).map((x) => `+ ${state.toppings.get(x.toppingId)?.name ?? x.name}`),
    ];
    return el('li', {},
      t('cart.times', { n: l.quantity, name: item?.name ?? l.name }),
      extras.length ? ` (${list(extras)})` : '',
      l.note ? el('span', { class: 'order-line-note' }, ` ${t('cart.lineNote', { note: l.note })}`) : null);
  });
  const meta = [timeOf(o.createdAt), money(o.total), o.note ? t('history.note', { note: o.note }) : ''].filter(Boolean).join(' · ');
  return el('li', {
    class: 'order', 'data-order-id': o.orderId, 'data-order-status': o.status, 'data-ticket': o.ticketNumber,
  },
  el('div', { class: 'order-head' },
    el('span', { class: 'ticket' }, t('history.ticket', { n: o.ticketNumber })),
    el('span', { class: 'status-badge', 'data-status': o.status, 'data-role': 'status' }, statusLabel(o.status))),
  el('ul', { class: 'order-lines' }, lines),
  el('p', { class: 'order-meta' }, meta));
}

export function renderOrders() {
  const orders = [...state.orders.values()].sort((a, b) =>
    compareInstants(b.createdAt, a.createdAt) || (b.ticketNumber ?? 0) - (a.ticketNumber ?? 0));
  $('orders').replaceChildren(...orders.map(renderOrder));
  $('orders-empty').hidden = orders.length > 0;
}
