// Staff console: tables calling. console.js's ServiceRequests follows the
// open requests (read on load and after a reconnect, then the shop
// stream's service.requested / service.acknowledged); this shows them in
// a banner at the top of every view of the console, newest first, each
// with its table, what it wants (staff, or the bill), how long it has
// waited and an Acknowledge button. A new request chimes (the call tune of
// console.js's Chime) and is read out through the polite live region; the
// banner stays put while the page scrolls. Hooks are listed in staff.js
// ("Tables calling").

import { announce, formatAge, formatTime, h, problemText, serverNow, serviceAsk, ServiceRequests } from './console.js';
import { $ } from './staff-dom.js';
import { rowId } from './staff-sessions.js';

/** ctx: {shopId, chime (console.js's Chime), focusSession(sessionId) (to its row; false when not listed)}. */
export function createService({ shopId, chime, focusSession }) {
  /** The last refusal of an acknowledgement, by request id. */
  const errors = new Map();
  const requests = new ServiceRequests({
    shopId,
    onChange: () => render(),
    onNew: (reqs) => {
      chime.play('service');
      const [req] = reqs;
      announce(
        reqs.length > 1 ? `${reqs.length} tables are calling.` : `Table ${req.tableLabel} ${serviceAsk(req)}.`,
      );
      const banner = $('service-requests');
      banner.classList.remove('is-new');
      void banner.offsetWidth; // restart the flash for a call during the last one
      banner.classList.add('is-new');
    },
  });

  function render() {
    const list = $('service-list');
    const focused = list.contains(document.activeElement) ? document.activeElement : null;
    const focusId = focused?.closest('li[data-request-id]')?.dataset.requestId;
    const focusAction = focused?.dataset.action;
    const focusIndex = focusId ? [...list.children].findIndex((li) => li.dataset.requestId === focusId) : -1;
    const open = requests.open.reverse(); // newest first
    const now = serverNow();
    list.replaceChildren(
      ...open.map((req) => {
        const kind = req.kind === 'bill' ? 'bill' : 'call';
        const busy = requests.busy.has(req.requestId);
        const error = errors.get(req.requestId);
        return h(
          'li',
          {
            class: `service-request kind-${kind}`,
            dataset: { requestId: req.requestId, kind, table: req.tableLabel, sessionId: req.sessionId },
          },
          h('span', { class: 'service-table', text: `Table ${req.tableLabel}` }),
          h('span', { class: 'service-kind', text: kind === 'bill' ? 'Wants the bill' : 'Calls for staff' }),
          h('time', {
            class: 'service-age',
            datetime: req.createdAt,
            title: `Since ${formatTime(req.createdAt)}`,
            dataset: { role: 'age' },
            text: formatAge(req.createdAt, now),
          }),
          h(
            'span',
            { class: 'service-actions' },
            h('a', {
              class: 'btn btn-small btn-quiet',
              href: `#${rowId(req.sessionId)}`,
              dataset: { action: 'go-to-session' },
              'aria-label': `Go to the open table ${req.tableLabel}`,
              text: 'Go to table',
            }),
            h('button', {
              type: 'button',
              class: 'btn btn-small btn-primary',
              dataset: { action: 'ack' },
              'aria-disabled': busy ? 'true' : null,
              'aria-busy': busy ? 'true' : null,
              'aria-label': `Acknowledge: table ${req.tableLabel} ${serviceAsk(req)}`,
              text: busy ? 'Sending…' : 'Acknowledge',
            }),
          ),
          error ? h('span', { class: 'service-error', dataset: { role: 'error' }, text: error }) : null,
        );
      }),
    );
    $('service-count').textContent = String(open.length);
    $('service-requests').hidden = open.length === 0;
    if (focusId) {
      // The same control of the same call, or the call now in its place.
      const row = list.querySelector(`li[data-request-id="${focusId}"]`) || list.children[Math.min(focusIndex, list.children.length - 1)];
      const target = row?.querySelector(`[data-action="${focusAction}"]`) || row?.querySelector('[data-action=ack]');
      (target || $('main')).focus({ preventScroll: true });
    }
  }

  $('service-list').addEventListener('click', async (event) => {
    const control = event.target.closest('[data-action]');
    const row = control?.closest('li[data-request-id]');
    if (!row) return;
    if (control.dataset.action === 'go-to-session') {
      event.preventDefault();
      focusSession(row.dataset.sessionId);
      return;
    }
    if (control.dataset.action !== 'ack' || control.getAttribute('aria-disabled') === 'true') return;
    const req = requests.byId.get(row.dataset.requestId);
    errors.delete(row.dataset.requestId);
    try {
      if (await requests.acknowledge(row.dataset.requestId)) {
        announce(`Acknowledged: table ${req.tableLabel}.`);
      }
    } catch (err) {
      if (err.status === 401 || err.status === 404) return;
      errors.set(req.requestId, `Not acknowledged: ${problemText(err)}`);
      render();
    }
  });

  return {
    load: () => requests.load(),
    requested: (req) => requests.requested(req),
    acknowledged: (req) => {
      errors.delete(req?.requestId);
      requests.acknowledged(req);
    },
    /** Every 30 s: the ages. */
    tick: render,
  };
}
