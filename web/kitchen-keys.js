// Kitchen display: keyboard and bump-bar operation (a bump bar is a
// keyboard with few keys). The selection is one ticket, shown with a thick
// ring (li.ticket[data-selected="true"]) and given the focus, so a screen
// reader reads it; each move is announced too ("2 of 18: ticket 42, …").
//
//   1–9            select the nth ticket on screen, in display order
//   ← → ↑ ↓        move the selection (left/right: previous/next; up/down:
//                  the ticket above/below); Home / End: first / last
//   Enter          move the selected ticket on one step (accept, start
//                  preparing, mark ready, mark served)
//   R, Backspace   recall the last bump (see kitchen-recent.js)
//   A              acknowledge the table calling longest (kitchen-service.js)
//   Esc            clear the selection
//   ?              this list (dialog#help-dialog; #help-open opens it too)
//
// Keys typed into a field, with Ctrl/Alt/Meta, or while a dialog is open
// are left alone; Enter on a focused button presses that button.

export class Keyboard {
  /**
   * `ids()` lists the ticket ids in display order; `element(id)` is a
   * ticket's li; `describe(id, position, total)` the text announced on
   * selection; `advance(id)`, `recall()` and `acknowledge()` (the oldest
   * call) act; `announce(text)` speaks;
   * `columns()` is true when the board is in columns (so left/right go by
   * position on screen, not by order).
   */
  constructor({ ids, element, describe, advance, recall, acknowledge, announce, columns }) {
    Object.assign(this, { ids, element, describe, advance, recall, acknowledge, announce, columns });
    this.selectedId = null;
    this.selectedIndex = -1;
    document.addEventListener('keydown', (event) => this.onKey(event));
    const help = document.getElementById('help-dialog');
    document.getElementById('help-open').addEventListener('click', () => help.showModal());
    document.getElementById('help-close').addEventListener('click', () => help.close());
    document.getElementById('board').addEventListener('click', (event) => {
      const ticket = event.target.closest('li.ticket');
      if (ticket && !event.target.closest('button')) this.select(ticket.dataset.orderId, { focus: true });
    });
  }

  onKey(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (document.getElementById('app').hidden || document.querySelector('dialog[open]')) return;
    const target = event.target instanceof Element ? event.target : document.body;
    if (target.closest('input, select, textarea, [contenteditable=""], [contenteditable="true"]')) return;
    const onControl = Boolean(target.closest('button, a[href], summary'));
    const key = event.key;
    const ids = this.ids();
    let handled = true;
    if (/^[1-9]$/.test(key)) {
      const n = Number(key);
      if (n <= ids.length) this.select(ids[n - 1], { focus: true, speak: true });
      else this.announce(ids.length ? `There are only ${ids.length} tickets on screen.` : 'No tickets on screen.');
    } else if (key === 'ArrowRight' || key === 'ArrowLeft' || key === 'ArrowDown' || key === 'ArrowUp') {
      this.move(key, ids);
    } else if (key === 'Home' || key === 'End') {
      if (ids.length) this.select(ids[key === 'Home' ? 0 : ids.length - 1], { focus: true, speak: true });
    } else if (key === 'Enter') {
      if (onControl) return;
      if (this.selectedId && ids.includes(this.selectedId)) this.advance(this.selectedId);
      else this.announce('Select a ticket first: press its number, 1 to 9.');
    } else if (key === 'r' || key === 'R' || key === 'Backspace') {
      this.recall();
    } else if (key === 'a' || key === 'A') {
      this.acknowledge();
    } else if (key === '?') {
      document.getElementById('help-dialog').showModal();
    } else if (key === 'Escape' && this.selectedId) {
      this.select(null);
      this.announce('Selection cleared.');
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  }

  move(key, ids) {
    if (!ids.length) return;
    const at = ids.indexOf(this.selectedId);
    if (at < 0) {
      this.select(ids[0], { focus: true, speak: true });
      return;
    }
    let next = null;
    const horizontal = key === 'ArrowRight' || key === 'ArrowLeft';
    if (horizontal && !this.columns()) {
      next = ids[at + (key === 'ArrowRight' ? 1 : -1)] || null;
    } else {
      next = this.nearest(ids, at, key) || (horizontal ? ids[at + (key === 'ArrowRight' ? 1 : -1)] : null) || null;
    }
    const where = { ArrowRight: 'after', ArrowLeft: 'before', ArrowDown: 'below', ArrowUp: 'above' }[key];
    if (next) this.select(next, { focus: true, speak: true });
    else this.announce(`No ticket ${where} this one.`);
  }

  /** The ticket on screen next to ids[at] in the arrow's direction. */
  nearest(ids, at, key) {
    const box = (id) => this.element(id)?.getBoundingClientRect();
    const cur = box(ids[at]);
    if (!cur) return null;
    const cx = cur.left + cur.width / 2;
    const vertical = key === 'ArrowDown' || key === 'ArrowUp';
    let best = null;
    let bestScore = Infinity;
    ids.forEach((id, i) => {
      if (i === at) return;
      const r = box(id);
      if (!r) return;
      const along = {
        ArrowDown: r.top - cur.bottom,
        ArrowUp: cur.top - r.bottom,
        ArrowRight: r.left - cur.right,
        ArrowLeft: cur.left - r.right,
      }[key];
      if (along < -4) return;
      // In line with this ticket first (same column, or same row), then
      // the nearest, then the best aligned.
      const inLine = vertical ? r.left < cur.right && r.right > cur.left : r.top < cur.bottom && r.bottom > cur.top;
      const across = vertical ? Math.abs(r.left + r.width / 2 - cx) : Math.abs(r.top - cur.top);
      const score = (inLine ? 0 : 1e7) + Math.round(along / 8) * 1000 + across;
      if (score < bestScore) {
        bestScore = score;
        best = id;
      }
    });
    return best;
  }

  /** Select a ticket (null clears). */
  select(id, { focus = false, speak = false } = {}) {
    this.selectedId = id;
    const ids = this.ids();
    this.selectedIndex = id ? ids.indexOf(id) : -1;
    this.mark();
    const el = id && this.element(id);
    if (el && focus) {
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    if (el && speak) this.announce(this.describe(id, this.selectedIndex + 1, ids.length));
  }

  /**
   * After a render: keep the selection on its ticket, or, if that ticket
   * left the screen, move it to the one now in its place.
   */
  sync() {
    const ids = this.ids();
    if (this.selectedId && !ids.includes(this.selectedId)) {
      const i = Math.min(this.selectedIndex, ids.length - 1);
      this.selectedId = i >= 0 ? ids[i] : null;
    }
    this.selectedIndex = this.selectedId ? ids.indexOf(this.selectedId) : -1;
    this.mark();
  }

  mark() {
    for (const el of document.querySelectorAll('#board li.ticket[data-selected]')) {
      if (el.dataset.orderId !== this.selectedId) delete el.dataset.selected;
    }
    const el = this.selectedId && this.element(this.selectedId);
    if (el) el.dataset.selected = 'true';
  }
}
