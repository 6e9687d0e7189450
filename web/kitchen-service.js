// Kitchen display: tables calling (`service.requested` events on the shop
// stream; `service.acknowledged` takes them off). A new call chimes (its own
// three-note tune) and is announced; the display lists open calls for 15
// minutes at most (the floor staff acknowledge them elsewhere). A server
// without service requests never sends these events: nothing shows.
//
// Hooks: #service (hidden while no call is open), #service-calls
// li[data-request-id] with data-kind (call | bill).

import { h } from './console.js';

const KEEP_MS = 15 * 60_000;

export class ServiceCalls {
  /** `tableOf(sessionId)` names a session's table from the orders known; `chime` and `announce` as in kitchen.js. */
  constructor({ chime, announce, tableOf, formatClock }) {
    Object.assign(this, { chime, announce, tableOf, formatClock });
    this.calls = new Map();
  }

  requested(req) {
    if (!req || typeof req.requestId !== 'string') return;
    if (req.status && req.status !== 'open') return this.acknowledged(req);
    const isNew = !this.calls.has(req.requestId);
    this.calls.set(req.requestId, { ...req, heardAt: Date.now() });
    if (isNew) {
      this.chime.play('service');
      this.announce(`Table ${this.table(req)} ${req.kind === 'bill' ? 'asks for the bill' : 'calls for service'}.`);
    }
    this.render();
  }

  acknowledged(req) {
    if (req && this.calls.delete(req.requestId)) this.render();
  }

  table(req) {
    return req.tableLabel || req.tableName || (req.sessionId && this.tableOf(req.sessionId)) || '?';
  }

  render() {
    const now = Date.now();
    for (const [id, call] of this.calls) if (now - call.heardAt > KEEP_MS) this.calls.delete(id);
    const list = document.getElementById('service-calls');
    const calls = [...this.calls.values()].sort((a, b) => a.heardAt - b.heardAt);
    list.replaceChildren(
      ...calls.map((call) => {
        const at = Date.parse(call.createdAt);
        const iso = new Date(Number.isNaN(at) ? call.heardAt : at).toISOString();
        const kind = call.kind === 'bill' ? 'bill' : 'call';
        return h(
          'li',
          { class: `service-call kind-${kind}`, dataset: { requestId: call.requestId, kind: call.kind || 'call' } },
          h('span', { class: 'service-table', text: `Table ${this.table(call)}` }),
          h('span', { class: 'service-kind', text: call.kind === 'bill' ? 'Bill' : 'Service' }),
          h('time', { class: 'service-time', datetime: iso, text: this.formatClock(iso) }),
        );
      }),
    );
    document.getElementById('service').hidden = calls.length === 0;
  }
}
