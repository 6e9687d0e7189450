// Kitchen display: tables calling. console.js's ServiceRequests follows
// them (read on start and after a reconnect, then the shop stream's
// service.requested / service.acknowledged); this draws them in the side
// panel, oldest first, where the rush layout keeps them on screen. A new
// call chimes (its own three-note tune) and is announced. A call stays
// until someone acknowledges it: its button here, A (kitchen-keys.js) for
// the oldest, another screen, the staff console, or a checkout.
//
// Hooks: #service (hidden while no call is open), #service-count,
// #service-calls li[data-request-id] (oldest first) with data-kind (call |
// bill), data-table, its time.service-age, and button[data-action=ack]
// (aria-busy="true" while the acknowledgement is sent).

import { formatAge, h, problemText, serverNow, serviceAsk, ServiceRequests, showProblem } from './console.js';

export class ServiceCalls {
  /** `shopId`; `chime` and `announce` as in kitchen.js; `formatClock(iso)` the shop's clock time. */
  constructor({ shopId, chime, announce, formatClock }) {
    Object.assign(this, { chime, announce, formatClock });
    this.requests = new ServiceRequests({
      shopId,
      onChange: () => this.render(),
      onNew: (reqs) => {
        chime.play('service');
        const [req] = reqs;
        announce(reqs.length > 1 ? `${reqs.length} tables are calling.` : `Table ${table(req)} ${serviceAsk(req)}.`);
      },
    });
    document.getElementById('service-calls').addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action=ack]');
      if (button && button.getAttribute('aria-disabled') !== 'true') this.acknowledge(button.dataset.requestId);
    });
  }

  load() {
    return this.requests.load();
  }

  requested(req) {
    this.requests.requested(req);
  }

  acknowledged(req) {
    this.requests.acknowledged(req);
  }

  /** A: acknowledge the oldest call not already on its way. */
  acknowledgeOldest() {
    const next = this.requests.open.find((r) => !this.requests.busy.has(r.requestId));
    if (next) this.acknowledge(next.requestId);
    else this.announce(this.requests.byId.size ? 'That call is being acknowledged.' : 'No table is calling.');
  }

  async acknowledge(requestId) {
    const req = this.requests.byId.get(requestId);
    try {
      if (await this.requests.acknowledge(requestId)) this.announce(`Acknowledged: table ${table(req)}.`);
    } catch (err) {
      if (err.status !== 401 && err.status !== 404) {
        showProblem(`Could not acknowledge table ${table(req)}: ${problemText(err)}`);
      }
    }
  }

  /** Draw the list (also every 15 s, for the ages), keeping the focus on an Acknowledge button. */
  render() {
    const list = document.getElementById('service-calls');
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.requestId : null;
    const focusIndex = focused ? [...list.children].findIndex((li) => li.dataset.requestId === focused) : -1;
    const calls = this.requests.open;
    const now = serverNow();
    list.replaceChildren(
      ...calls.map((call) => {
        const kind = call.kind === 'bill' ? 'bill' : 'call';
        const busy = this.requests.busy.has(call.requestId);
        return h(
          'li',
          { class: `service-call kind-${kind}`, dataset: { requestId: call.requestId, kind, table: table(call) } },
          h('span', { class: 'service-table', text: `Table ${table(call)}` }),
          h('span', { class: 'service-kind', text: kind === 'bill' ? 'Bill' : 'Service' }),
          h('time', {
            class: 'service-age',
            datetime: call.createdAt,
            title: `Since ${this.formatClock(call.createdAt)}`,
            text: formatAge(call.createdAt, now),
          }),
          h('button', {
            type: 'button',
            class: 'btn btn-small btn-ack',
            dataset: { action: 'ack', requestId: call.requestId },
            'aria-disabled': busy ? 'true' : null,
            'aria-busy': busy ? 'true' : null,
            'aria-label': `Acknowledge: table ${table(call)} ${serviceAsk(call)}`,
            text: busy ? 'Sending…' : 'Acknowledge',
          }),
        );
      }),
    );
    document.getElementById('service-count').textContent = String(calls.length);
    document.getElementById('service').hidden = calls.length === 0;
    if (focused) {
      const buttons = [...list.querySelectorAll('button[data-action=ack]')];
      const again = buttons.find((b) => b.dataset.requestId === focused) || buttons[Math.min(focusIndex, buttons.length - 1)];
      (again || document.getElementById('board')).focus({ preventScroll: true });
    }
  }
}

function table(req) {
  return req?.tableLabel || '?';
}
