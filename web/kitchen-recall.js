// Kitchen display: recall, i.e. undo a bump. POST /api/v1/orders/{id}/recall
// {"expectedVersion": n} → 200 with the order back where its last advance
// came from, or a 409 problem: VERSION_CONFLICT, RECALL_EXPIRED (the last
// move is older than the server's window) or NOTHING_TO_RECALL (never
// moved, cancelled, or recalled already). A server without recall answers
// 404 or 405: that is shown as it is, nothing is faked. Every refusal goes to #problem with its
// code (data-code). The Idempotency-Key is made once per intended recall
// (order, version) and reused by the automatic retries.

import { api, ApiProblem, announce, clearProblem, problemText, showProblem } from './console.js';
import { STATUS_LABEL } from './kitchen-ticket.js';

/**
 * `page` gives what the recall needs of kitchen.js: orders, busy, keys,
 * recent, upsert(order), refreshOrder(id), render(), selectOnBoard(id).
 */
export async function recallOrder(page, orderId) {
  const { orders, busy, keys, recent } = page;
  const order = orders.get(orderId) || (await page.refreshOrder(orderId));
  if (!order || busy.has(orderId)) return;
  const intent = `${orderId}:v${order.version}:recall`;
  const key = keys.get(intent);
  busy.add(orderId);
  page.render();
  try {
    const updated = await api(`/api/v1/orders/${encodeURIComponent(orderId)}/recall`, {
      method: 'POST',
      body: { expectedVersion: order.version },
      key,
      retries: 3,
    });
    keys.forget(intent);
    page.upsert(updated);
    recent.remove(orderId);
    clearProblem('recall');
    const now = orders.get(orderId) || updated;
    announce(`Ticket ${order.ticketNumber} recalled: back to ${STATUS_LABEL[now.status].toLowerCase()}.`);
    busy.delete(orderId);
    page.render();
    page.selectOnBoard(orderId);
  } catch (err) {
    if (!err.retryable) keys.forget(intent);
    if (err.status !== 401) await showRecallProblem(page, order, err);
  } finally {
    busy.delete(orderId);
    page.render();
  }
}

/** The server's refusal of a recall, said plainly. */
async function showRecallProblem(page, order, err) {
  const ticket = `Ticket ${order.ticketNumber}`;
  let text;
  if (err.code === 'RECALL_EXPIRED') {
    text = `Too late to recall ticket ${order.ticketNumber}: ${err.detail}`;
  } else if (err.code === 'VERSION_CONFLICT' || err.code === 'NOTHING_TO_RECALL') {
    const now = await page.refreshOrder(order.orderId);
    const where = now ? STATUS_LABEL[now.status].toLowerCase() : 'gone';
    text =
      err.code === 'VERSION_CONFLICT'
        ? `${ticket} was changed on another screen and is now ${where}: it was not recalled.`
        : `${ticket} cannot be recalled from ${where}: ${err.detail}`;
  } else if (err.status === 404 || err.status === 405) {
    // The order still there means the endpoint is not.
    const now = await page.refreshOrder(order.orderId);
    text = now
      ? `Recall is not available on this server yet: it answered ${err.status} (${err.detail}) ` +
        `to POST /api/v1/orders/{id}/recall. ${ticket} was not changed.`
      : `${ticket} no longer exists on the server.`;
  } else {
    text = `${ticket} was not recalled: ${problemText(err)}${err.retryable ? ' Press Recall again to retry.' : ''}`;
  }
  showProblem(new ApiProblem(err.status, { ...err.body, code: err.code, detail: text }), 'recall');
}
