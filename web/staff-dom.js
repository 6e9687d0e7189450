// Staff console: small helpers its parts share (staff.js lists the parts
// and their hooks). Nothing here touches the DOM until called, so Node can
// import the parts that use it.

export const $ = (id) => document.getElementById(id);

/** `fn` once, `ms` after the last of a burst of calls. */
export function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

/** Swap a tbody's rows, keeping focus on the same button of the same row (rows keyed by `key`, a data-* name). */
export function replaceRows(tbody, newRows, key = 'sessionId') {
  const focused = document.activeElement;
  const row = focused && tbody.contains(focused) ? focused.closest('tr') : null;
  const id = row && row.dataset[key];
  const action = focused && focused.dataset ? focused.dataset.action : null;
  tbody.replaceChildren(...newRows);
  if (id) {
    const attr = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const again = tbody.querySelector(`tr[data-${attr}="${id}"] [data-action="${action}"]`);
    if (again) again.focus();
  }
}

/**
 * Print with `what` as a class on <body> (the print CSS shows only that
 * part), taken off again once the print dialog closes.
 */
export function printOnly(what) {
  document.body.classList.add(what);
  const done = () => {
    document.body.classList.remove(what);
    window.removeEventListener('afterprint', done);
  };
  window.addEventListener('afterprint', done);
  window.print();
}

/** Set or clear a field's error: its message element, aria-invalid, and (on error) the focus. */
export function fieldError(input, messageEl, text) {
  messageEl.textContent = text || '';
  if (text) {
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  } else {
    input.removeAttribute('aria-invalid');
  }
}

/** A server's message as a sentence: "must not be empty" → "Must not be empty." */
export function sentence(text) {
  const s = String(text ?? '').trim();
  return s ? `${s.charAt(0).toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? '' : '.'}` : '';
}

/**
 * Sold out now (a menu item, topping or option, or an inventory entry): an
 * 86 with an end stops counting at that end by itself, before any event
 * says so.
 */
export function soldOutNow(thing, now = Date.now()) {
  if (!thing?.soldOut) return false;
  if (thing.stock === 0) return true;
  return !(thing.soldOutUntil && Date.parse(thing.soldOutUntil) <= now);
}
