// Kitchen display: "All day" — how many of each item the open tickets
// still need (placed, accepted and preparing; not ready), with the choices
// that make a difference told apart: "Steak 5 (Medium 3, Rare 2)".
//
// A line's variant is its options' names, then its toppings as "+ name",
// joined with ", " (a line with neither is "plain"). With a station chosen,
// only that station's lines count.
//
// Hooks: #all-day-list li[data-all-day-item=<menuItemId>] per item, with
// data-quantity and .all-day-name; inside, li[data-variant=<label>] with
// data-quantity (only when an item has a choice on some line).

import { h } from './console.js';

export const PENDING = ['placed', 'accepted', 'preparing'];
const PLAIN = 'plain';

/** The variant label of an order line (see above). */
export function variantLabel(line) {
  const parts = (line.options || []).map((o) => o.name);
  for (const t of line.toppings || []) parts.push(`+ ${t.name}`);
  return parts.length ? parts.join(', ') : PLAIN;
}

/**
 * The counts: [{menuItemId, name, quantity, variants: [{label, quantity}]}]
 * by name; `variants` is empty when every line of the item is plain.
 */
export function allDayCounts(orders, { lineShown = () => true } = {}) {
  const items = new Map();
  for (const order of orders) {
    if (!PENDING.includes(order.status)) continue;
    for (const line of order.items || []) {
      if (!lineShown(line)) continue;
      let item = items.get(line.menuItemId);
      if (!item) {
        item = { menuItemId: line.menuItemId, name: line.name, quantity: 0, variants: new Map() };
        items.set(line.menuItemId, item);
      }
      item.quantity += line.quantity;
      const label = variantLabel(line);
      item.variants.set(label, (item.variants.get(label) || 0) + line.quantity);
    }
  }
  return [...items.values()]
    .map((item) => {
      const variants = [...item.variants]
        .map(([label, quantity]) => ({ label, quantity }))
        .sort((a, b) => (a.label === PLAIN) - (b.label === PLAIN) || a.label.localeCompare(b.label));
      const onlyPlain = variants.length === 1 && variants[0].label === PLAIN;
      const { menuItemId, name, quantity } = item;
      return { menuItemId, name, quantity, variants: onlyPlain ? [] : variants };
    })
    .sort((a, b) => a.name.localeCompare(b.name) || (a.menuItemId < b.menuItemId ? -1 : 1));
}

let lastStamp = '';

/** Show the counts in #all-day (rebuilt only when they changed). */
export function renderAllDay(counts, { stationLabel }) {
  const list = document.getElementById('all-day-list');
  const section = document.getElementById('all-day');
  const stamp = JSON.stringify([counts, stationLabel]);
  if (stamp === lastStamp) return;
  lastStamp = stamp;
  list.replaceChildren(
    ...counts.map((item) => {
      const spoken = item.variants.length
        ? ` (${item.variants.map((v) => `${v.label} ${v.quantity}`).join(', ')})`
        : '';
      return h(
        'li',
        { class: 'all-day-item', dataset: { allDayItem: item.menuItemId, quantity: String(item.quantity) } },
        h('span', { class: 'visually-hidden', text: `${item.name}: ${item.quantity}${spoken}` }),
        h(
          'p',
          { class: 'all-day-row', 'aria-hidden': 'true' },
          h('span', { class: 'all-day-qty', text: String(item.quantity) }),
          h('span', { class: 'all-day-name', text: item.name }),
        ),
        item.variants.length
          ? h(
              'ul',
              { class: 'all-day-variants', 'aria-hidden': 'true' },
              item.variants.map((v) =>
                h(
                  'li',
                  { dataset: { variant: v.label, quantity: String(v.quantity) } },
                  h('span', { class: 'variant-label', text: v.label }),
                  ' ',
                  h('span', { class: 'variant-qty', text: String(v.quantity) }),
                ),
              ),
            )
          : null,
      );
    }),
  );
  section.classList.toggle('is-empty', counts.length === 0);
  const scope = document.getElementById('all-day-scope');
  if (scope) scope.textContent = stationLabel;
}
