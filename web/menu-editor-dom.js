// Menu editor (menu-editor.js): small DOM helpers its parts share, with no
// state of their own: the ↑/↓ buttons, keeping the focus on the same control
// across a re-render (data-key) or into the form shown, moving an entry in a
// list, a debounce.

import { h } from './console.js';

export function moveButton(action, label, disabled, key) {
  return h('button', {
    type: 'button',
    class: 'btn btn-small btn-icon',
    dataset: { action, key },
    'aria-label': label,
    'aria-disabled': disabled ? 'true' : null,
    title: label,
    text: action.endsWith('up') ? '↑' : '↓',
  });
}

export function focusedKey(container) {
  const el = document.activeElement;
  return el && container.contains(el) ? el.dataset.key || null : null;
}
export function restoreFocus(container, key) {
  if (!key) return;
  const el = container.querySelector(`[data-key="${CSS.escape(key)}"]`);
  if (el) el.focus();
}

export function move(list, index, by) {
  const to = index + by;
  if (to < 0 || to >= list.length) return false;
  const [x] = list.splice(index, 1);
  list.splice(to, 0, x);
  return true;
}

export function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}

export function focusIn(selector) {
  const el = document.getElementById('menu-detail').querySelector(selector);
  if (el) el.focus();
}
