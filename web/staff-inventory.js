// Staff console: the inventory. A row per tracked or trackable entry (menu
// items and toppings): set a count or untrack, restock, 86 with an optional
// end time. stock.changed events show at once; the list is re-read after.
// Its hooks are listed in staff.js ("Inventory").

import {
  api,
  announce,
  clearProblem,
  formatDateTime,
  fromZonedInputValue,
  h,
  problemText,
  serverNow,
  shopTimeZone,
  showProblem,
  toZonedInputValue,
} from './console.js';
import { $, debounce, soldOutNow } from './staff-dom.js';

/** ctx: {shopPath, keys (IntentKeys)}. */
export function createInventory({ shopPath, keys }) {
  /** Inventory entries by item id, in the server's order. */
  let inventory = new Map();
  const rows = new Map();
  const refreshSoon = debounce(() => load(), 300);

  async function load() {
    try {
      const { entries } = await api(`${shopPath}/inventory`, { retries: 2 });
      const next = new Map();
      for (const entry of entries) {
        const known = inventory.get(entry.itemId);
        // A newer entry from an answer that beat this list is kept.
        next.set(entry.itemId, known && known.version > entry.version ? known : entry);
      }
      inventory = next;
      renderInventory();
      clearProblem('inventory');
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the inventory: ${problemText(err)}`, 'inventory');
    }
  }

  /** A stock.changed event, shown at once (the list re-read follows). */
  function applyStockChange(change) {
    const entry = inventory.get(change.itemId);
    if (!entry) return;
    updateRow({ ...entry, stock: change.stock, soldOut: change.soldOut, soldOutUntil: change.soldOutUntil ?? null });
  }

  function renderInventory() {
    const tbody = $('inventory-list');
    const order = [];
    for (const entry of inventory.values()) {
      order.push(updateRow(entry));
    }
    order.forEach((row, i) => {
      if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] || null);
    });
    for (const [id, row] of rows) {
      if (!inventory.has(id)) {
        row.remove();
        rows.delete(id);
      }
    }
    applyFilter();
  }

  /** The row of an entry: built once, its read-only parts updated in place. */
  function updateRow(entry) {
    let row = rows.get(entry.itemId);
    if (!row) {
      row = buildRow(entry);
      rows.set(entry.itemId, row);
    }
    const tracked = entry.stock !== null && entry.stock !== undefined;
    const soldOut = soldOutNow(entry);
    Object.assign(row.dataset, {
      stock: tracked ? String(entry.stock) : '',
      soldOut: String(soldOut),
      version: String(entry.version),
    });
    row.classList.toggle('is-sold-out', soldOut);
    const stock = row.querySelector('[data-role=stock]');
    stock.textContent = tracked ? String(entry.stock) : 'Untracked';
    stock.classList.toggle('is-untracked', !tracked);
    stock.classList.toggle('is-zero', tracked && entry.stock === 0);
    row.querySelector('[data-action=untrack]').hidden = !tracked;
    const restock = row.querySelector('[data-action=restock]');
    const restockInput = row.querySelector('[data-field=restock-quantity]');
    restock.hidden = !tracked;
    restockInput.hidden = !tracked;
    row.querySelector('[data-role=restock-hint]').hidden = tracked;
    const toggle = row.querySelector('[data-action=toggle-sold-out]');
    toggle.setAttribute('aria-pressed', String(soldOut));
    toggle.querySelector('.toggle-state').textContent = soldOut ? 'Sold out' : 'Available';
    const until = row.querySelector('[data-role=sold-out-until]');
    const untilActive = soldOut && entry.soldOutUntil && Date.parse(entry.soldOutUntil) > Date.now();
    until.textContent = untilActive
      ? `until ${formatDateTime(entry.soldOutUntil)}`
      : soldOut && tracked && entry.stock === 0
        ? 'no stock left'
        : '';
    const untilInput = row.querySelector('[data-field=sold-out-until]');
    if (document.activeElement !== untilInput) {
      untilInput.min = toZonedInputValue(serverNow());
      untilInput.title = `Shop time (${shopTimeZone()})`;
    }
    // A new 86 may get an end; one in force is turned off first.
    row.querySelector('.until-group').hidden = soldOut;
    return row;
  }

  function buildRow(entry) {
    const id = entry.itemId;
    const name = entry.name;
    const row = h(
      'tr',
      { dataset: { itemId: id, kind: entry.kind } },
      h(
        'th',
        { scope: 'row', class: 'item-name' },
        h('span', { text: name }),
        entry.kind === 'topping' ? h('span', { class: 'badge', text: 'Topping' }) : null,
      ),
      h('td', { class: 'stock-cell' }, h('span', { class: 'stock', dataset: { role: 'stock' } })),
      h(
        'td',
        {},
        h(
          'form',
          { class: 'inline-form', dataset: { form: 'set-stock' }, novalidate: true },
          h('label', { class: 'visually-hidden', for: `stock-${id}`, text: `New count for ${name}` }),
          h('input', {
            id: `stock-${id}`,
            type: 'number',
            min: '0',
            max: '1000000',
            step: '1',
            inputmode: 'numeric',
            class: 'num-input',
            dataset: { field: 'stock' },
          }),
          h('button', {
            type: 'submit',
            class: 'btn btn-small',
            dataset: { action: 'set-stock' },
            'aria-label': `Set the count of ${name}`,
            text: 'Set',
          }),
          h('button', {
            type: 'button',
            class: 'btn btn-small btn-quiet',
            dataset: { action: 'untrack' },
            'aria-label': `Stop counting ${name} (untracked)`,
            text: 'Untrack',
          }),
        ),
      ),
      h(
        'td',
        {},
        h(
          'form',
          { class: 'inline-form', dataset: { form: 'restock' }, novalidate: true },
          h('label', { class: 'visually-hidden', for: `restock-${id}`, text: `Units to add to ${name}` }),
          h('input', {
            id: `restock-${id}`,
            type: 'number',
            min: '1',
            max: '100000',
            step: '1',
            inputmode: 'numeric',
            class: 'num-input',
            placeholder: '+',
            dataset: { field: 'restock-quantity' },
          }),
          h('button', {
            type: 'submit',
            class: 'btn btn-small',
            dataset: { action: 'restock' },
            'aria-label': `Restock ${name}`,
            text: 'Add',
          }),
          h('span', { class: 'hint', dataset: { role: 'restock-hint' }, text: 'Set a count first' }),
        ),
      ),
      h(
        'td',
        { class: 'sold-out-cell' },
        h(
          'div',
          { class: 'inline-form' },
          h(
            'button',
            {
              type: 'button',
              class: 'btn btn-small toggle',
              dataset: { action: 'toggle-sold-out' },
              'aria-pressed': 'false',
              'aria-label': `${name} sold out`,
            },
            h('span', { class: 'toggle-track', 'aria-hidden': 'true' }, h('span', { class: 'toggle-thumb' })),
            h('span', { class: 'toggle-state', 'aria-hidden': 'true' }),
          ),
          h(
            'span',
            { class: 'until-group' },
            h(
              'label',
              { for: `until-${id}`, class: 'until-label' },
              'until',
              h('span', { class: 'visually-hidden', text: ` (${name} sold out until, optional, shop time)` }),
            ),
            h('input', {
              id: `until-${id}`,
              type: 'datetime-local',
              class: 'until-input',
              dataset: { field: 'sold-out-until' },
            }),
          ),
          h('span', { class: 'until-note', dataset: { role: 'sold-out-until' } }),
        ),
      ),
    );
    row.append(
      h('td', { class: 'row-message-cell' }, h('span', { class: 'row-message', dataset: { role: 'row-message' } })),
    );
    return row;
  }

  $('inventory-list').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.target;
    const row = form.closest('tr[data-item-id]');
    if (form.dataset.form === 'set-stock') setStock(row);
    else if (form.dataset.form === 'restock') restock(row);
  });

  $('inventory-list').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    if (!button) return;
    const row = button.closest('tr[data-item-id]');
    if (button.dataset.action === 'untrack') putEntry(row, { stock: null }, 'Now untracked: it never runs out.');
    else if (button.dataset.action === 'toggle-sold-out') toggleSoldOut(row);
  });

  function setStock(row) {
    const input = row.querySelector('[data-field=stock]');
    const value = input.value.trim();
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < 0 || n > 1_000_000) {
      rowMessage(row, 'error', 'Enter a whole number from 0 to 1,000,000.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    input.removeAttribute('aria-invalid');
    putEntry(row, { stock: n }, `Count set to ${n}.`).then((ok) => {
      if (ok) input.value = '';
    });
  }

  function toggleSoldOut(row) {
    const entry = inventory.get(row.dataset.itemId);
    if (!entry) return;
    if (soldOutNow(entry)) {
      putEntry(row, { soldOut: false }, 'Back on the menu.').then((ok) => {
        const now = inventory.get(row.dataset.itemId);
        if (ok && now && soldOutNow(now))
          rowMessage(row, 'error', 'Still sold out: no stock left. Set a count or restock it.');
      });
      return;
    }
    const untilInput = row.querySelector('[data-field=sold-out-until]');
    let soldOutUntil = null;
    if (untilInput.value) {
      // What staff typed is the shop's wall clock, wherever this device's clock is set.
      const until = new Date(fromZonedInputValue(untilInput.value));
      if (Number.isNaN(until.getTime()) || until.getTime() <= serverNow()) {
        rowMessage(row, 'error', 'The end of the 86 must be in the future (or leave it empty).');
        untilInput.setAttribute('aria-invalid', 'true');
        untilInput.focus();
        return;
      }
      soldOutUntil = until.toISOString();
    }
    untilInput.removeAttribute('aria-invalid');
    const said = soldOutUntil ? `Sold out until ${formatDateTime(soldOutUntil)}.` : 'Sold out until you turn it back on.';
    putEntry(row, { soldOut: true, soldOutUntil }, said).then((ok) => {
      if (ok) untilInput.value = '';
    });
  }

  async function putEntry(row, body, success) {
    const itemId = row.dataset.itemId;
    const name = inventory.get(itemId)?.name || 'item';
    setRowBusy(row, true);
    try {
      const entry = await api(`${shopPath}/inventory/${encodeURIComponent(itemId)}`, { method: 'PUT', body, retries: 2 });
      storeEntry(entry);
      rowMessage(row, 'ok', success);
      announce(`${name}: ${success}`);
      return true;
    } catch (err) {
      if (err.status !== 401) {
        rowMessage(row, 'error', problemText(err));
        announce(`${name}: ${problemText(err)}`);
      }
      if (err.status === 404) refreshSoon();
      return false;
    } finally {
      setRowBusy(row, false);
    }
  }

  async function restock(row) {
    const itemId = row.dataset.itemId;
    const entry = inventory.get(itemId);
    const input = row.querySelector('[data-field=restock-quantity]');
    const value = input.value.trim();
    const n = Number(value);
    if (value === '' || !Number.isInteger(n) || n < 1 || n > 100_000) {
      rowMessage(row, 'error', 'Enter how many units to add: 1 to 100,000.');
      input.setAttribute('aria-invalid', 'true');
      input.focus();
      return;
    }
    input.removeAttribute('aria-invalid');
    // One key per intended restock: the same units on the same version of the
    // entry. Pressing again after a failed attempt resends it under the same
    // key, so it is never counted twice; once it lands, the version moves on.
    const intent = `restock:${itemId}:v${entry.version}:${n}`;
    setRowBusy(row, true);
    try {
      const updated = await api(`${shopPath}/inventory/${encodeURIComponent(itemId)}/restock`, {
        method: 'POST',
        body: { quantity: n },
        key: keys.get(intent),
        retries: 3,
      });
      keys.forget(intent);
      storeEntry(updated);
      input.value = '';
      const said = `Added ${n}: ${updated.stock} in stock.`;
      rowMessage(row, 'ok', said);
      announce(`${entry.name}: ${said}`);
    } catch (err) {
      if (!err.retryable) keys.forget(intent);
      if (err.status !== 401) {
        const again = err.retryable ? ' Press Add again to retry: it will not be counted twice.' : '';
        rowMessage(row, 'error', `${problemText(err)}${again}`);
        announce(`${entry.name}: ${problemText(err)}`);
      }
    } finally {
      setRowBusy(row, false);
    }
  }

  function storeEntry(entry) {
    const known = inventory.get(entry.itemId);
    if (known && known.version > entry.version) return;
    inventory.set(entry.itemId, entry);
    updateRow(entry);
  }

  function setRowBusy(row, busy) {
    if (busy) row.setAttribute('aria-busy', 'true');
    else row.removeAttribute('aria-busy');
    for (const b of row.querySelectorAll('button')) {
      if (busy) b.setAttribute('aria-disabled', 'true');
      else b.removeAttribute('aria-disabled');
    }
  }

  function rowMessage(row, kind, text) {
    const el = row.querySelector('[data-role=row-message]');
    el.dataset.kind = kind;
    el.textContent = text;
    clearTimeout(el._clear);
    if (kind === 'ok') {
      el._clear = setTimeout(() => {
        el.textContent = '';
      }, 6000);
    }
  }

  $('inventory-filter').addEventListener('input', applyFilter);

  function applyFilter() {
    const q = $('inventory-filter').value.trim().toLowerCase();
    let shown = 0;
    for (const [id, row] of rows) {
      const entry = inventory.get(id);
      const match = !q || (entry && entry.name.toLowerCase().includes(q));
      row.hidden = !match;
      if (match) shown += 1;
    }
    $('inventory-empty').hidden = shown > 0 || rows.size === 0;
  }

  /** Every 30 s: 86 marks that ran out. */
  function tick() {
    for (const entry of inventory.values()) updateRow(entry);
  }

  return { load, refreshSoon, applyStockChange, tick };
}
