// Staff console: an order entered by staff for an open table ("Add order"
// on its row). The dialog reads the guest menu (GET /api/v1/shops/{shopId}/
// menu, the shop's default language, as the kitchen names things), lets
// staff pick items (an item with choices or toppings opens its line:
// required groups must be chosen before "Add to order", as on the guest
// sheet — menu-rules.js judges), and sends POST /api/v1/sessions/{id}/
// staff-orders with an Idempotency-Key made per draft: a retry, or a
// second press after a lost answer, goes under the same key, so the
// kitchen gets one ticket. A refusal (OUT_OF_STOCK with its shortages,
// INVALID_OPTIONS, …) is shown in the dialog and on the lines it names;
// the draft stays as it was, also when the dialog is closed, until it is
// sent. The draft model is staff-order-draft.js; the hooks are listed in
// staff.js ("Staff orders").

import { api, announce, h, moneyFormatter, problemText } from './console.js';
import { choiceProblems, hasChoices, isRequired, maxOf, orderedOptionIds, unitPriceOf } from './menu-rules.js';
import { MAX_QUANTITY } from './order-sdk.js';
import { $, debounce, soldOutNow } from './staff-dom.js';
import {
  choiceText,
  Draft,
  indexMenu,
  lineProblems,
  noteText,
  refusalByLine,
  stockWarning,
} from './staff-order-draft.js';

/** ctx: {shopId, keys (IntentKeys), onSent(order, session) (after a ticket went to the kitchen)}. */
export function createStaffOrder(ctx) {
  const { shopId, keys } = ctx;
  const dialog = $('order-dialog');
  /** Drafts by session id: kept until sent, over a closed dialog. */
  const drafts = new Map();
  /** The server's last word on lines, by line key (cleared when the line changes). */
  let refused = new Map();
  let session = null;
  let draft = null;
  let opener = null;
  let menu = indexMenu(null);
  let menuItems = [];
  let money = moneyFormatter('USD');
  /** The line being built: {itemId, chosen: Set, toppings: Set, quantity} or null (the menu is shown). */
  let line = null;
  let sending = false;

  const reloadSoon = debounce(() => dialog.open && loadMenu(), 300);

  async function open(s, from) {
    session = s;
    opener = from;
    if (!drafts.has(s.sessionId)) drafts.set(s.sessionId, new Draft());
    draft = drafts.get(s.sessionId);
    refused = new Map();
    line = null;
    dialog.dataset.sessionId = s.sessionId;
    $('order-title').textContent = `Add an order for table ${s.tableLabel}`;
    $('order-error').textContent = '';
    $('order-note').value = draft.note;
    $('order-filter').value = '';
    showPane();
    renderDraft();
    if (!dialog.open) dialog.showModal();
    $('order-filter').focus();
    await loadMenu();
  }

  async function loadMenu() {
    $('order-menu-state').textContent = menuItems.length ? '' : 'Loading the menu…';
    try {
      const data = await api(`/api/v1/shops/${encodeURIComponent(shopId)}/menu`, { auth: false, retries: 2 });
      menu = indexMenu(data);
      menuItems = data.items;
      money = moneyFormatter(data.currency);
      $('order-menu-state').textContent = menuItems.length ? '' : 'The menu is empty.';
    } catch (err) {
      $('order-menu-state').textContent = `Could not load the menu: ${problemText(err)}`;
    }
    renderMenu();
    if (line) renderLine({ rebuild: false });
    renderDraft();
  }

  // ── the menu ──

  function renderMenu() {
    const q = $('order-filter').value.trim().toLowerCase();
    const byCategory = new Map();
    for (const item of menuItems) {
      if (q && !item.name.toLowerCase().includes(q)) continue;
      if (!byCategory.has(item.category)) byCategory.set(item.category, []);
      byCategory.get(item.category).push(item);
    }
    const focusedId = document.activeElement?.closest?.('#order-menu [data-item-id]')?.dataset.itemId;
    $('order-menu').replaceChildren(
      ...[...byCategory].map(([category, items], i) =>
        h(
          'li',
          { class: 'order-category' },
          h('h4', { id: `order-cat-${i}`, class: 'order-category-name', text: category || 'Other' }),
          h(
            'ul',
            { class: 'order-items', 'aria-labelledby': `order-cat-${i}` },
            items.map((item) => {
              const out = soldOutNow(item);
              const choices = hasChoices(item) || offeredToppings(item).length > 0;
              return h(
                'li',
                { dataset: { itemId: item.menuItemId } },
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'order-item',
                    dataset: { action: 'pick', itemId: item.menuItemId },
                    disabled: out,
                    'aria-label': `${item.name}, ${money(item.price)}${out ? ', sold out' : choices ? ', choose…' : ''}`,
                  },
                  h('span', { class: 'order-item-name', text: item.name }),
                  h('span', { class: 'order-item-price', text: out ? 'Sold out' : money(item.price) }),
                  choices && !out ? h('span', { class: 'order-item-more', 'aria-hidden': 'true', text: 'Choose…' }) : null,
                ),
              );
            }),
          ),
        ),
      ),
    );
    $('order-menu-empty').hidden = byCategory.size > 0 || !menuItems.length;
    if (focusedId) $('order-menu').querySelector(`button[data-item-id="${focusedId}"]`)?.focus();
  }

  $('order-filter').addEventListener('input', renderMenu);

  $('order-menu').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action=pick]');
    if (!button || button.disabled) return;
    const item = menu.items.get(button.dataset.itemId);
    if (!item) return;
    if (hasChoices(item) || offeredToppings(item).length) {
      line = { itemId: item.menuItemId, chosen: new Set(), toppings: new Set(), quantity: 1 };
      showPane();
      renderLine({ rebuild: true });
      $('order-line-note').value = '';
      $('order-line-title').focus();
    } else {
      addLine({ menuItemId: item.menuItemId, quantity: 1 }, item);
    }
  });

  function offeredToppings(item) {
    return item.maxToppings > 0 ? (item.toppings ?? []) : [];
  }

  /** The menu, or the line being built, in the dialog's left pane. */
  function showPane() {
    $('order-pick').hidden = Boolean(line);
    $('order-line').hidden = !line;
  }

  // ── the line being built ──

  function renderLine({ rebuild }) {
    const item = menu.items.get(line.itemId);
    if (!item) {
      $('order-line-reason').textContent = 'This item is no longer on the menu.';
      $('order-line-add').disabled = true;
      return;
    }
    if (rebuild) {
      $('order-line-title').textContent = item.name;
      $('order-line-price').textContent = money(item.price);
      $('order-line-groups').replaceChildren(
        ...(item.optionGroups ?? []).filter((g) => (g.options ?? []).length).map((g) => groupFieldset(g)),
        ...(offeredToppings(item).length ? [toppingsFieldset(item)] : []),
      );
    }
    // Choices that sold out meanwhile are dropped (and said so).
    for (const g of item.optionGroups ?? []) {
      for (const o of g.options ?? []) {
        if (line.chosen.has(o.optionId) && soldOutNow(o)) {
          line.chosen.delete(o.optionId);
          announce(`${o.name} is sold out now: choose again.`);
        }
      }
    }
    for (const input of $('order-line-groups').querySelectorAll('input[data-option-id]')) {
      const hit = (item.optionGroups ?? []).flatMap((g) => g.options ?? []).find((o) => o.optionId === input.dataset.optionId);
      input.checked = line.chosen.has(input.dataset.optionId);
      input.disabled = !hit || soldOutNow(hit);
    }
    for (const input of $('order-line-groups').querySelectorAll('input[data-none]')) {
      const group = item.optionGroups.find((g) => g.groupId === input.dataset.groupId);
      input.checked = !(group?.options ?? []).some((o) => line.chosen.has(o.optionId));
    }
    for (const fs of $('order-line-groups').querySelectorAll('fieldset[data-group-id]')) {
      const group = item.optionGroups.find((g) => g.groupId === fs.dataset.groupId);
      const count = (group?.options ?? []).filter((o) => line.chosen.has(o.optionId)).length;
      const max = group ? maxOf(group) : 0;
      if (max > 1) {
        for (const input of fs.querySelectorAll('input[type=checkbox]')) {
          if (!input.checked && count >= max) input.disabled = true;
        }
      }
    }
    const toppingInputs = [...$('order-line-groups').querySelectorAll('input[data-topping-id]')];
    for (const input of toppingInputs) {
      const topping = menu.toppings.get(input.dataset.toppingId);
      if (line.toppings.has(input.dataset.toppingId) && (!topping || soldOutNow(topping))) {
        line.toppings.delete(input.dataset.toppingId);
      }
      input.checked = line.toppings.has(input.dataset.toppingId);
      input.disabled =
        !topping || soldOutNow(topping) || (!input.checked && line.toppings.size >= (item.maxToppings ?? 0));
    }
    $('order-line-quantity').value = String(line.quantity);
    const unit = unitPriceOf(item, { toppingIds: [...line.toppings], optionIds: [...line.chosen] }, menu.toppings);
    $('order-line-total').textContent = money(unit * line.quantity);
    const reasons = lineReasons(item);
    $('order-line-reason').textContent = reasons.join(' ');
    $('order-line-add').disabled = reasons.length > 0;
  }

  /** Why the line cannot be added yet (texts), or []. */
  function lineReasons(item) {
    if (soldOutNow(item)) return [`${item.name} is sold out.`];
    const out = choiceProblems(item, [...line.chosen])
      .filter((p) => p.kind !== 'unknown')
      .map((p) => choiceText(p));
    const note = noteText($('order-line-note').value);
    if (note) out.push(note);
    return out;
  }

  function groupFieldset(group) {
    const single = maxOf(group) === 1;
    const name = `order-g-${group.groupId}`;
    const rule = single
      ? isRequired(group)
        ? 'required, choose one'
        : 'optional, one at most'
      : isRequired(group)
        ? `required, choose ${group.minChoices}${maxOf(group) > group.minChoices ? ` to ${maxOf(group)}` : ''}`
        : `optional, up to ${maxOf(group)}`;
    const rows = [];
    if (single && !isRequired(group)) {
      const id = `order-none-${group.groupId}`;
      rows.push(
        h(
          'label',
          { class: 'order-choice', for: id },
          h('input', { type: 'radio', id, name, value: '', dataset: { groupId: group.groupId, none: 'true' } }),
          h('span', { text: 'None' }),
        ),
      );
    }
    for (const o of group.options) {
      const id = `order-o-${o.optionId}`;
      rows.push(
        h(
          'label',
          { class: 'order-choice', for: id },
          h('input', {
            type: single ? 'radio' : 'checkbox',
            id,
            name,
            value: o.optionId,
            dataset: { optionId: o.optionId, groupId: group.groupId },
          }),
          h('span', { class: 'order-choice-name', text: o.name }),
          h('span', {
            class: 'order-choice-price',
            text: soldOutNow(o) ? 'Sold out' : o.price ? `+${money(o.price)}` : '',
          }),
        ),
      );
    }
    return h(
      'fieldset',
      { class: 'order-group', dataset: { groupId: group.groupId, required: String(isRequired(group)) } },
      h('legend', {}, group.name, ' ', h('span', { class: `order-rule${isRequired(group) ? ' is-required' : ''}`, text: `(${rule})` })),
      rows,
    );
  }

  function toppingsFieldset(item) {
    const offered = offeredToppings(item);
    const rule = item.maxToppings < offered.length ? `up to ${item.maxToppings}` : 'optional';
    return h(
      'fieldset',
      { class: 'order-group', dataset: { role: 'toppings' } },
      h('legend', {}, 'Toppings ', h('span', { class: 'order-rule', text: `(${rule})` })),
      offered.map((t) => {
        const id = `order-t-${t.toppingId}`;
        return h(
          'label',
          { class: 'order-choice', for: id },
          h('input', { type: 'checkbox', id, value: t.toppingId, dataset: { toppingId: t.toppingId } }),
          h('span', { class: 'order-choice-name', text: t.name }),
          h('span', { class: 'order-choice-price', text: soldOutNow(t) ? 'Sold out' : t.price ? `+${money(t.price)}` : '' }),
        );
      }),
    );
  }

  $('order-line-groups').addEventListener('change', (event) => {
    const input = event.target;
    if (!line || !(input instanceof HTMLInputElement)) return;
    const item = menu.items.get(line.itemId);
    if (input.dataset.toppingId) {
      if (input.checked) line.toppings.add(input.dataset.toppingId);
      else line.toppings.delete(input.dataset.toppingId);
    } else if (input.dataset.groupId && item) {
      const group = item.optionGroups.find((g) => g.groupId === input.dataset.groupId);
      if (input.type === 'radio') for (const o of group.options) line.chosen.delete(o.optionId);
      if (input.dataset.optionId) {
        if (input.checked) line.chosen.add(input.dataset.optionId);
        else line.chosen.delete(input.dataset.optionId);
      }
    }
    renderLine({ rebuild: false });
  });

  $('order-line-note').addEventListener('input', () => line && renderLine({ rebuild: false }));

  $('order-line-quantity').addEventListener('change', () => {
    if (!line) return;
    const n = Math.round(Number($('order-line-quantity').value));
    line.quantity = Number.isFinite(n) ? Math.min(MAX_QUANTITY, Math.max(1, n)) : 1;
    renderLine({ rebuild: false });
  });

  for (const [id, step] of [['order-line-less', -1], ['order-line-more', 1]]) {
    $(id).addEventListener('click', () => {
      if (!line) return;
      line.quantity = Math.min(MAX_QUANTITY, Math.max(1, line.quantity + step));
      renderLine({ rebuild: false });
    });
  }

  $('order-line-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const item = line && menu.items.get(line.itemId);
    if (!item || lineReasons(item).length) return;
    const itemId = line.itemId;
    addLine(
      {
        menuItemId: itemId,
        quantity: line.quantity,
        toppingIds: [...line.toppings],
        optionIds: orderedOptionIds(item, [...line.chosen]),
        note: $('order-line-note').value,
      },
      item,
    );
    backToMenu(itemId);
  });

  $('order-line-back').addEventListener('click', () => backToMenu(line?.itemId));

  function backToMenu(itemId) {
    line = null;
    showPane();
    renderMenu();
    const button = itemId && $('order-menu').querySelector(`button[data-item-id="${itemId}"]`);
    (button || $('order-filter')).focus();
  }

  // ── the draft ──

  function addLine(spec, item) {
    const key = draft.add(spec, item);
    if (!key) {
      $('order-error').textContent = 'An order has at most 50 lines: send this one first.';
      return;
    }
    refused.delete(key);
    renderDraft();
    const added = draft.lines.find((l) => l.key === key);
    announce(`${item.name} added: ${added.quantity} in this order. ${draft.quantity} items in all.`);
  }

  function renderDraft() {
    if (!draft) return;
    const focused = document.activeElement?.closest?.('#order-draft li[data-line-key]');
    const focusKey = focused?.dataset.lineKey;
    const focusAction = document.activeElement?.dataset?.action;
    const blocked = [];
    $('order-draft').replaceChildren(
      ...draft.lines.map((l, i) => {
        const item = menu.items.get(l.menuItemId);
        const name = item?.name ?? 'Unknown item';
        const problems = menuItems.length ? lineProblems(l, menu) : [];
        const server = refused.get(l.key);
        if (problems.length) blocked.push(l.key);
        const choices = (item?.optionGroups ?? []).flatMap((g) => g.options ?? []).filter((o) => l.optionIds.includes(o.optionId));
        const toppings = l.toppingIds.map((id) => menu.toppings.get(id)?.name).filter(Boolean);
        const errorId = `order-line-error-${i}`;
        const error = [...problems, server].filter(Boolean).join(' ');
        const warning = server ? '' : stockWarning(l, menu);
        return h(
          'li',
          {
            class: `order-line${error ? ' has-error' : ''}`,
            dataset: { lineKey: l.key, menuItemId: l.menuItemId, quantity: String(l.quantity) },
          },
          h(
            'div',
            { class: 'order-line-text' },
            h('span', { class: 'order-line-name' }, h('span', { class: 'order-line-qty', text: `${l.quantity}×` }), ` ${name}`),
            choices.length ? h('span', { class: 'order-line-choices', text: choices.map((o) => o.name).join(', ') }) : null,
            toppings.length ? h('span', { class: 'order-line-choices', text: `+ ${toppings.join(', ')}` }) : null,
            l.note ? h('span', { class: 'order-line-note', text: `“${l.note}”` }) : null,
            h('span', { class: 'order-line-error', id: errorId, dataset: { role: 'line-error' }, text: error }),
            warning ? h('span', { class: 'order-line-warning', dataset: { role: 'line-warning' }, text: warning }) : null,
          ),
          h(
            'div',
            { class: 'order-line-tools' },
            h('button', {
              type: 'button',
              class: 'btn btn-small',
              dataset: { action: 'less' },
              'aria-label': `One ${name} less`,
              'aria-describedby': error ? errorId : null,
              text: '−',
            }),
            h('button', {
              type: 'button',
              class: 'btn btn-small',
              dataset: { action: 'more' },
              disabled: l.quantity >= MAX_QUANTITY,
              'aria-label': `One ${name} more`,
              text: '+',
            }),
            h('button', {
              type: 'button',
              class: 'btn btn-small btn-quiet',
              dataset: { action: 'remove' },
              'aria-label': `Remove ${name} from the order`,
              text: 'Remove',
            }),
          ),
        );
      }),
    );
    $('order-draft-empty').hidden = !draft.empty;
    $('order-total').textContent = money(draft.total(menu));
    const why = draft.problem() || (blocked.length ? 'Fix the marked lines first.' : '');
    $('order-send-reason').textContent = sending ? 'Sending…' : why;
    $('order-send').disabled = sending || Boolean(why);
    if (focusKey) {
      const row = $('order-draft').querySelector(`li[data-line-key="${CSS.escape(focusKey)}"]`);
      const target = row?.querySelector(`[data-action="${focusAction}"]:not(:disabled)`) || row?.querySelector('button');
      (target || $('order-filter')).focus();
    }
  }

  $('order-draft').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]');
    const row = button?.closest('li[data-line-key]');
    if (!row || sending) return;
    const key = row.dataset.lineKey;
    const l = draft.lines.find((x) => x.key === key);
    if (!l) return;
    refused.delete(key);
    const name = menu.items.get(l.menuItemId)?.name ?? 'Item';
    if (button.dataset.action === 'less' && l.quantity > 1) draft.setQuantity(key, l.quantity - 1);
    else if (button.dataset.action === 'more') draft.setQuantity(key, l.quantity + 1);
    else if (button.dataset.action === 'remove' || button.dataset.action === 'less') {
      draft.remove(key);
      announce(`${name} removed from the order.`);
    }
    renderDraft();
  });

  $('order-note').addEventListener('input', () => {
    if (!draft) return;
    draft.note = $('order-note').value;
    renderDraft();
  });

  // ── sending ──

  $('order-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    if (sending || !draft || $('order-send').disabled) return;
    const s = session;
    const sent = draft;
    const intent = sent.intent(s.sessionId);
    // A changed draft is another request: the key of the one before goes.
    if (sent.pendingIntent && sent.pendingIntent !== intent) keys.forget(sent.pendingIntent);
    sent.pendingIntent = intent;
    sending = true;
    $('order-error').textContent = '';
    $('order-send').textContent = 'Sending…';
    renderDraft();
    try {
      const order = await api(`/api/v1/sessions/${encodeURIComponent(s.sessionId)}/staff-orders`, {
        method: 'POST',
        body: sent.body(),
        key: keys.get(intent),
        retries: 3,
      });
      keys.forget(intent);
      drafts.delete(s.sessionId);
      if (draft === sent) {
        draft = null;
        dialog.close();
      }
      ctx.onSent(order, s);
    } catch (err) {
      if (!err.retryable) {
        keys.forget(intent);
        sent.pendingIntent = null;
      }
      if (err.status === 401) {
        if (draft === sent) dialog.close();
        return;
      }
      if (err.retryable && draft === sent) {
        $('order-error').textContent = `${problemText(err)} Press “Send to the kitchen” again: it will not be sent twice.`;
      } else if (!err.retryable) {
        const refusal = refusalByLine(err.body, sent, menu);
        if (draft === sent) {
          refused = refusal.lines;
          $('order-error').textContent = refusal.general;
        }
      }
      // Stock or choices moved on: show the menu as it is now.
      if (err.code === 'OUT_OF_STOCK' || err.code === 'INVALID_OPTIONS' || err.code === 'VALIDATION_FAILED') reloadSoon();
    } finally {
      sending = false;
      $('order-send').textContent = 'Send to the kitchen';
      if (draft) renderDraft();
    }
  });

  $('order-close').addEventListener('click', () => dialog.close());

  dialog.addEventListener('close', () => {
    line = null;
    session = null;
    if (opener?.isConnected) opener.focus();
    else $('table-label').focus();
  });

  return {
    open,
    /** The menu or its stock changed: a dialog open shows it as it is now. */
    menuChanged: reloadSoon,
  };
}
