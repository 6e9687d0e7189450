// Kitchen display: "Recently done" — tickets moved to ready, served or
// cancelled in the last 10 minutes (on any screen, as this one heard it),
// newest first, with a Recall button for ready and served ones; and the last
// bump made on this screen (what R / Backspace recalls).
//
// Both are kept on this device per shop (localStorage
// `ordergate.kitchen.recent.<shopId>`: order ids, statuses and times only),
// so a reload shows the list again once the orders are read from the API.
//
// Hooks: #recent-list li[data-recent-order-id] with data-status (at most 8),
// and in it button[data-action=recall] (data-recall-to: the status the
// ticket was bumped from, when this screen saw it — a recall puts it back
// there, steps skipped included; aria-busy="true" while the recall is sent).

import { h, readStored, writeStored } from './console.js';

export const RECENT_WINDOW_MS = 10 * 60_000;
const RECALLABLE = new Set(['ready', 'served']); // a cancel is never recalled
const SHOWN_MAX = 8;
const KEPT_MAX = 24;
const DONE = new Set(['ready', 'served', 'cancelled']);
const STATUS_LABEL = { ready: 'Ready', served: 'Served', cancelled: 'Cancelled' };

export class RecentStore {
  constructor(shopId) {
    this.key = `ordergate.kitchen.recent.${shopId}`;
    const stored = readStored(this.key, null) || {};
    const valid = (e) => e && typeof e.orderId === 'string' && DONE.has(e.status) && Number.isFinite(e.at);
    this.entries = Array.isArray(stored.entries) ? stored.entries.filter(valid) : [];
    const bump = stored.lastBump;
    this.lastBump = bump && typeof bump.orderId === 'string' && Number.isFinite(bump.at) ? bump : null;
    this.prune();
  }

  save() {
    writeStored(this.key, { entries: this.entries, lastBump: this.lastBump });
  }

  get(orderId) {
    return this.entries.find((e) => e.orderId === orderId) || null;
  }

  /** The order reached a done status from `from` (null: not seen), newest first, one entry per order. */
  add(orderId, status, from, at = Date.now()) {
    const entry = { orderId, status, from: from || null, at };
    this.entries = [entry, ...this.entries.filter((e) => e.orderId !== orderId)].slice(0, KEPT_MAX);
    this.save();
  }

  /** The entry now says `status` (the order moved on, e.g. ready → served, without a time of its own). */
  restate(orderId, status) {
    const entry = this.get(orderId);
    if (entry && entry.status !== status) {
      entry.from = null; // moved from somewhere this page did not see
      entry.status = status;
      this.save();
    }
  }

  remove(orderId) {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.orderId !== orderId);
    if (this.lastBump && this.lastBump.orderId === orderId) this.lastBump = null;
    if (this.entries.length !== before) this.save();
  }

  /** A move made on this screen: {orderId, from, to}. */
  noteBump(bump) {
    this.lastBump = { ...bump, at: Date.now() };
    this.save();
  }

  /** Drop what is older than the window; true if anything went. */
  prune(now = Date.now()) {
    const keep = (at) => now - at < RECENT_WINDOW_MS;
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => keep(e.at));
    let changed = this.entries.length !== before;
    if (this.lastBump && !keep(this.lastBump.at)) {
      this.lastBump = null;
      changed = true;
    }
    if (changed) this.save();
    return changed;
  }

  /**
   * What R recalls: the last bump made here if its ticket is still where
   * that bump put it, else the newest ready/served entry still so.
   */
  recallTarget(orders) {
    const b = this.lastBump;
    if (b && orders.get(b.orderId)?.status === b.to) return b.orderId;
    const entry = this.entries.find((e) => RECALLABLE.has(e.status) && orders.get(e.orderId)?.status === e.status);
    return entry ? entry.orderId : null;
  }
}

/**
 * Show the entries whose orders are known. `formatClock(iso)` formats the
 * time of the move; `busy` holds the order ids with a recall on its way.
 */
export function renderRecent(store, orders, { formatClock, busy }) {
  const list = document.getElementById('recent-list');
  const focused = document.activeElement;
  const focusId = list.contains(focused) ? focused.closest('li')?.dataset.recentOrderId : null;
  const items = [];
  for (const entry of store.entries) {
    const order = orders.get(entry.orderId);
    if (!order) continue;
    if (items.length >= SHOWN_MAX) break;
    const recallable = RECALLABLE.has(entry.status) && order.status === entry.status;
    const to = entry.from || null;
    const sending = busy.has(order.orderId);
    const iso = new Date(entry.at).toISOString();
    items.push(
      h(
        'li',
        { class: 'recent-item', dataset: { recentOrderId: order.orderId, status: entry.status } },
        h('span', { class: 'recent-number', text: `#${order.ticketNumber}` }),
        h('span', { class: 'recent-table', text: `Table ${order.tableLabel}` }),
        h('span', { class: `recent-status status-${entry.status}`, text: STATUS_LABEL[entry.status] }),
        h('time', { class: 'recent-time', datetime: iso, text: formatClock(iso) }),
        recallable
          ? h('button', {
              type: 'button',
              class: 'btn btn-small btn-recall',
              dataset: { action: 'recall', recallTo: to, orderId: order.orderId },
              'aria-busy': sending ? 'true' : null,
              'aria-disabled': sending ? 'true' : null,
              'aria-label':
                `Recall ticket ${order.ticketNumber}, table ${order.tableLabel}: ` +
                (to ? `back to ${to}` : 'undo its last move'),
              text: sending ? 'Recalling…' : 'Recall',
            })
          : null,
      ),
    );
  }
  list.replaceChildren(...items);
  document.getElementById('recent').classList.toggle('is-empty', items.length === 0);
  if (focusId) {
    const again = list.querySelector(`li[data-recent-order-id="${CSS.escape(focusId)}"] button`);
    (again || document.getElementById('recent-title')).focus();
  }
}
