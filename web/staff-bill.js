// Staff console: the bill dialog. "Check out" on an open table previews
// its bill and closes the table on confirmation; "Bill" on a closed one
// shows its bill again. Its hooks are listed in staff.js ("Tables").

import { api, announce, formatDateTime, h, problemText } from './console.js';
import { $, printOnly } from './staff-dom.js';

/**
 * ctx: {keys (IntentKeys), money() (the shop's money formatter now),
 * closedHere(session, closedAt) (the lists follow a checkout made here),
 * refreshSoon()}.
 */
export function createBill(ctx) {
  const { keys } = ctx;
  let billSession = null;
  let billOpener = null;

  async function open(session, mode, opener) {
    billSession = session;
    billOpener = opener;
    const dialog = $('bill-dialog');
    dialog.dataset.sessionId = session.sessionId;
    dialog.dataset.mode = mode;
    $('bill-title').textContent =
      mode === 'preview' ? `Check out table ${session.tableLabel}` : `Bill for table ${session.tableLabel}`;
    $('bill-state').textContent = 'Loading…';
    $('bill-error').textContent = '';
    $('bill-orders').replaceChildren();
    $('bill-total').textContent = '';
    $('checkout-confirm').hidden = mode !== 'preview';
    $('checkout-confirm').disabled = true;
    if (!dialog.open) dialog.showModal();
    try {
      if (mode === 'preview') {
        const { orders } = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/orders?limit=500`, {
          retries: 2,
        });
        const total = orders.filter((o) => o.status !== 'cancelled').reduce((sum, o) => sum + o.total, 0);
        renderBill(orders.slice().reverse(), total);
        const open = orders.filter((o) => o.status !== 'served' && o.status !== 'cancelled').length;
        $('bill-state').textContent =
          'The table is still open. Checking out closes it: its guests can no longer order. Cancelled orders are not charged.' +
          (open ? ` Note: ${open === 1 ? '1 order is' : `${open} orders are`} not served yet.` : '');
        $('checkout-confirm').disabled = false;
        $('checkout-confirm').focus();
      } else {
        // Checking out a closed table again returns its bill, unchanged.
        const bill = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/checkout`, {
          method: 'POST',
          key: keys.get(`checkout:${session.sessionId}`),
          retries: 2,
        });
        showClosedBill(bill);
        $('bill-close').focus();
      }
    } catch (err) {
      $('bill-state').textContent = '';
      if (err.status !== 401) $('bill-error').textContent = problemText(err);
      else dialog.close();
    }
  }

  $('checkout-confirm').addEventListener('click', async () => {
    if (!billSession) return;
    const session = billSession;
    const button = $('checkout-confirm');
    const intent = `checkout:${session.sessionId}`;
    button.disabled = true;
    $('bill-error').textContent = '';
    try {
      const bill = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/checkout`, {
        method: 'POST',
        key: keys.get(intent),
        retries: 3,
      });
      keys.forget(intent);
      showClosedBill(bill);
      ctx.closedHere(session, bill.closedAt);
      announce(`Table ${bill.tableLabel} is checked out. Total ${ctx.money()(bill.total)}.`);
      $('bill-close').focus();
      ctx.refreshSoon();
    } catch (err) {
      if (!err.retryable) keys.forget(intent);
      button.disabled = false;
      if (err.status !== 401) $('bill-error').textContent = problemText(err);
    }
  });

  function showClosedBill(bill) {
    const dialog = $('bill-dialog');
    dialog.dataset.mode = 'closed';
    $('bill-title').textContent = `Bill for table ${bill.tableLabel}`;
    $('checkout-confirm').hidden = true;
    $('bill-state').textContent = `Closed ${formatDateTime(bill.closedAt)}. Cancelled orders are listed but not charged.`;
    renderBill(bill.orders, bill.total);
    keys.forget(`checkout:${bill.sessionId}`);
  }

  function renderBill(orders, total) {
    const money = ctx.money();
    $('bill-orders').replaceChildren(
      ...orders.map((o) =>
        h(
          'tr',
          { dataset: { orderId: o.orderId, status: o.status }, class: o.status === 'cancelled' ? 'is-cancelled' : null },
          h('th', { scope: 'row', text: `#${o.ticketNumber}` }),
          h(
            'td',
            {},
            h(
              'ul',
              { class: 'bill-lines' },
              o.items.map((line) =>
                h(
                  'li',
                  {},
                  h(
                    'span',
                    { class: 'bill-line-name' },
                    `${line.quantity}× ${line.name}`,
                    line.options?.length
                      ? h('span', { class: 'bill-toppings', text: ` (${line.options.map((x) => x.name).join(', ')})` })
                      : null,
                    line.toppings.length
                      ? h('span', { class: 'bill-toppings', text: ` + ${line.toppings.map((t) => t.name).join(', ')}` })
                      : null,
                  ),
                  h('span', { class: 'bill-line-total', text: money(line.lineTotal) }),
                ),
              ),
            ),
            o.note ? h('p', { class: 'bill-note', text: `Note: ${o.note}` }) : null,
          ),
          h('td', {
            class: `status status-${o.status}`,
            text: o.status === 'cancelled' ? 'Cancelled (not charged)' : o.status,
          }),
          h('td', { class: 'num' }, o.status === 'cancelled' ? h('s', { text: money(o.total) }) : money(o.total)),
        ),
      ),
    );
    $('bill-total').textContent = money(total);
    $('bill-total').dataset.amount = String(total);
    $('bill-empty').hidden = orders.length > 0;
  }

  $('bill-close').addEventListener('click', () => $('bill-dialog').close());
  $('bill-print').addEventListener('click', () => printOnly('print-bill'));
  $('bill-dialog').addEventListener('close', () => {
    const sessionId = $('bill-dialog').dataset.sessionId;
    billSession = null;
    if (billOpener && billOpener.isConnected) {
      billOpener.focus();
      return;
    }
    // The table was checked out, so its row moved to the closed list.
    const bill = document.querySelector(`#closed-list tr[data-session-id="${sessionId}"] [data-action=bill]`);
    (bill || $('table-label')).focus();
  });

  return { open };
}
