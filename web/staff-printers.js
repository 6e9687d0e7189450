// Staff console: the kitchen printers (ESC/POS over TCP). The shop's
// printers (GET /api/v1/shops/{shopId}/printers), each with its address,
// station, state (idle, printing with tickets waiting, failing with the
// last error), how many tickets it printed and when last; re-read every 5 s
// while the section is shown. Staff add one (POST …/printers: the server's
// 409 PRINTER_NAME_TAKEN and 422 are shown on the field they name), remove
// one (DELETE /api/v1/printers/{printerId}, after a confirm), and reprint a
// ticket of the shop's recent orders on one (POST …/reprint {orderId}: a
// copy headed "REPRINT (copy)", queued behind its backlog). Hooks are
// listed in staff.js ("Printers"). The texts below have no DOM, so Node
// can test them (web/test/staff-printers.test.mjs).

import { api, announce, clearProblem, formatDateTime, h, problemText, showProblem } from './console.js';
import { $, fieldError, replaceRows, sentence } from './staff-dom.js';

/** Orders a reprint can be asked for: the shop's recent ones. */
const RECENT_STATUSES = 'placed,accepted,preparing,ready,served';
const REFRESH_MS = 5_000;

/** "all stations" for a printer without one, else its station. */
export function stationText(station) {
  return station ? String(station) : 'all stations';
}

/** "1 ticket waiting", "3 tickets waiting". */
export function waitingText(backlog) {
  const n = Number(backlog) || 0;
  return `${n} ${n === 1 ? 'ticket' : 'tickets'} waiting`;
}

/**
 * A printer's state as {status, label, detail}: "Idle"; "Printing" with
 * what waits; "Failing" with the last error and when (`format` turns an
 * ISO time into the shop's time) and what waits.
 */
export function printerStatus(printer, format = formatDateTime) {
  const status = ['idle', 'printing', 'failing'].includes(printer?.status) ? printer.status : 'idle';
  if (status === 'printing') return { status, label: 'Printing', detail: waitingText(printer.backlog) };
  if (status === 'failing') {
    const parts = [];
    if (printer.lastError) parts.push(String(printer.lastError));
    if (printer.lastErrorAt) parts.push(`since ${format(printer.lastErrorAt)}`);
    parts.push(waitingText(printer.backlog));
    return { status, label: 'Failing', detail: parts.join(' · ') };
  }
  return { status, label: 'Idle', detail: '' };
}

/** "Printed 3 · last at 14:05", "Nothing printed yet". */
export function printedText(printer, format = formatDateTime) {
  const n = Number(printer?.printed) || 0;
  if (!n) return 'Nothing printed yet';
  const last = printer.lastPrintedAt ? format(printer.lastPrintedAt) : '';
  return `Printed ${n} · ${last ? `last at ${last}` : 'last time unknown'}`;
}

/** An order as an option of the reprint form: "Ticket #12 · 14:05 · ready". */
export function orderOptionText(order, format = formatDateTime) {
  const at = order.createdAt || order.placedAt;
  return [`Ticket #${order.ticketNumber}`, at ? format(at) : null, order.status || null].filter(Boolean).join(' · ');
}

const FIELDS = [
  { name: 'name', input: 'printer-name', error: 'printer-name-error', label: 'The name' },
  { name: 'address', input: 'printer-address', error: 'printer-address-error', label: 'The address' },
  { name: 'station', input: 'printer-station', error: 'printer-station-error', label: 'The station' },
];

/** ctx: {shopPath, keys (IntentKeys)}. */
export function createPrinters({ shopPath, keys }) {
  /** The printers (by name, as the server lists them) and the recent orders. */
  let printers = [];
  let orders = [];
  /** The last result of a row's action, by printer id. */
  const messages = new Map();

  function shown() {
    return !$('app').hidden && !$('printers').hidden && document.visibilityState !== 'hidden';
  }

  async function load() {
    try {
      const [list, recent] = await Promise.all([
        api(`${shopPath}/printers`, { retries: 1 }),
        api(`${shopPath}/orders?status=${RECENT_STATUSES}&limit=100`, { retries: 1 }),
      ]);
      printers = list.printers;
      orders = recent.orders;
      render();
      clearProblem('printers');
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the printers: ${problemText(err)}`, 'printers');
    }
  }

  function render() {
    replaceRows($('printer-list'), printers.map(printerRow), 'printerId');
    $('printers-count').textContent = String(printers.length);
    $('printers-empty').hidden = printers.length > 0;
    renderReprint();
  }

  function printerRow(p) {
    const state = printerStatus(p);
    const message = messages.get(p.printerId);
    return h(
      'tr',
      { dataset: { printerId: p.printerId, printerName: p.name, status: state.status, backlog: String(p.backlog ?? 0) } },
      h('th', { scope: 'row', class: 'printer-name', text: p.name }),
      h('td', { class: 'mono', dataset: { role: 'address' }, text: p.address }),
      h('td', { dataset: { role: 'station' }, text: stationText(p.station) }),
      h(
        'td',
        { dataset: { role: 'status' } },
        h('span', { class: `badge printer-badge printer-${state.status}`, dataset: { role: 'badge' }, text: state.label }),
        state.detail ? h('span', { class: 'printer-detail', dataset: { role: 'status-detail' }, text: ` ${state.detail}` }) : null,
        p.unconfirmed
          ? h('p', {
              class: 'printer-unconfirmed',
              dataset: { role: 'unconfirmed' },
              text: 'Unconfirmed: will reprint marked',
            })
          : null,
      ),
      h(
        'td',
        { dataset: { role: 'printed', printed: String(p.printed ?? 0) } },
        p.lastPrintedAt ? h('time', { datetime: p.lastPrintedAt, text: printedText(p) }) : printedText(p),
      ),
      h(
        'td',
        { class: 'actions' },
        h('button', {
          type: 'button',
          class: 'btn btn-small btn-danger',
          dataset: { action: 'remove' },
          'aria-label': `Remove the printer ${p.name}`,
          text: 'Remove',
        }),
        h('span', {
          class: 'row-message',
          dataset: { role: 'row-message', kind: message?.kind ?? '' },
          text: message?.text ?? '',
        }),
      ),
    );
  }

  /** The reprint form's choices, kept as chosen while the lists are re-read. */
  function renderReprint() {
    fillSelect($('reprint-order'), orders.map((o) => ({ value: o.orderId, text: orderOptionText(o), ticket: o.ticketNumber })));
    fillSelect($('reprint-printer'), printers.map((p) => ({ value: p.printerId, text: p.name })));
    $('reprint-submit').disabled = !orders.length || !printers.length;
  }

  function fillSelect(select, options) {
    const stamp = options.map((o) => `${o.value}=${o.text}`).join('|');
    if (select.dataset.stamp === stamp) return;
    const chosen = select.value;
    select.replaceChildren(
      ...options.map((o) => h('option', { value: o.value, dataset: o.ticket ? { ticket: String(o.ticket) } : {}, text: o.text })),
    );
    select.dataset.stamp = stamp;
    if (options.some((o) => o.value === chosen)) select.value = chosen;
  }

  // ── removing ──

  $('printer-list').addEventListener('click', async (event) => {
    const button = event.target.closest('button[data-action=remove]');
    const row = button?.closest('tr[data-printer-id]');
    const printer = row && printers.find((p) => p.printerId === row.dataset.printerId);
    if (!printer || button.disabled) return;
    if (!window.confirm(`Remove the printer ${printer.name}? Its tickets stop printing.`)) return;
    button.disabled = true;
    try {
      // Removing twice removes it once: a plain retry is safe (404 then: gone already).
      await api(`/api/v1/printers/${encodeURIComponent(printer.printerId)}`, { method: 'DELETE', retries: 2 });
      printers = printers.filter((p) => p.printerId !== printer.printerId);
      messages.delete(printer.printerId);
      render();
      announce(`Printer ${printer.name} removed.`);
    } catch (err) {
      button.disabled = false;
      if (err.status === 401) return;
      if (err.status === 404) {
        load();
        return;
      }
      messages.set(printer.printerId, { kind: 'error', text: `Not removed: ${problemText(err)}` });
      render();
    }
  });

  // ── adding ──

  $('printer-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const submit = event.target.querySelector('button[type=submit]');
    for (const f of FIELDS) fieldError($(f.input), $(f.error), '');
    const body = { name: $('printer-name').value.trim(), address: $('printer-address').value.trim() };
    const station = $('printer-station').value.trim();
    if (station) body.station = station;
    const intent = `printer:${JSON.stringify(body)}`;
    submit.disabled = true;
    try {
      const printer = await api(`${shopPath}/printers`, { method: 'POST', body, key: keys.get(intent), retries: 2 });
      keys.forget(intent);
      printers = [...printers.filter((p) => p.printerId !== printer.printerId), printer].sort((a, b) =>
        a.name.localeCompare(b.name, undefined, { numeric: true }),
      );
      for (const f of FIELDS) $(f.input).value = '';
      render();
      $('printer-name').focus();
      announce(`Printer ${printer.name} added: it prints the orders placed from now on.`);
    } catch (err) {
      if (!err.retryable) keys.forget(intent);
      if (err.status === 401) return;
      const errors = Array.isArray(err.body?.errors) ? err.body.errors : [];
      let shown = false;
      // The first field named gets the focus.
      for (const e of [...errors].reverse()) {
        const f = FIELDS.find((x) => x.name === e.field);
        if (f) {
          fieldError($(f.input), $(f.error), `${f.label} ${String(e.message).replace(/\.$/, '')}.`);
          shown = true;
        }
      }
      // A name taken (409), or a refusal naming no field we have: on the name.
      if (!shown) fieldError($('printer-name'), $('printer-name-error'), sentence(problemText(err)));
      if (err.code === 'PRINTER_NAME_TAKEN') load();
    } finally {
      submit.disabled = false;
    }
  });

  // ── reprinting ──

  $('reprint-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const status = $('reprint-status');
    const order = orders.find((o) => o.orderId === $('reprint-order').value);
    const printer = printers.find((p) => p.printerId === $('reprint-printer').value);
    if (!order || !printer) return;
    const submit = $('reprint-submit');
    submit.disabled = true;
    status.dataset.kind = '';
    status.textContent = 'Sending…';
    try {
      // Not retried: a reprint sent twice prints two copies.
      await api(`/api/v1/printers/${encodeURIComponent(printer.printerId)}/reprint`, {
        method: 'POST',
        body: { orderId: order.orderId },
      });
      status.dataset.kind = 'ok';
      status.textContent = `Queued: ticket #${order.ticketNumber} on ${printer.name}.`;
      announce(status.textContent);
      load();
    } catch (err) {
      if (err.status === 401) return;
      status.dataset.kind = 'error';
      status.textContent = `Not queued: ${problemText(err)}`;
    } finally {
      submit.disabled = !orders.length || !printers.length;
    }
  });

  setInterval(() => {
    if (shown()) load();
  }, REFRESH_MS);

  return {
    load,
    /** The section shown again: read it now rather than in up to 5 s. */
    shown: () => {
      if (shown()) load();
    },
  };
}
