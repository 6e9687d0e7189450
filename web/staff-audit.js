// Staff console: the order audit. Every guest (and staff) order request and
// what became of it, newest first (the last 50), re-read on order events.
// Its hooks are listed in staff.js ("Audit").

import { api, ApiProblem, announce, clearProblem, formatDateTime, h, problemText, showProblem } from './console.js';
import { $, debounce } from './staff-dom.js';

/** ctx: {shopPath, sessions (Map by id: the table labels)}. */
export function createAudit({ shopPath, sessions }) {
  const refreshSoon = debounce(() => load(), 800);

  async function load() {
    try {
      const { entries } = await api(`${shopPath}/audit?limit=50`, { retries: 1 });
      const unknown = entries.some((e) => e.sessionId && !sessions.has(e.sessionId));
      $('audit-list').replaceChildren(...entries.map(auditRow));
      $('audit-empty').hidden = entries.length > 0;
      if (unknown) lookUpSessions(entries);
      clearProblem('audit');
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the audit: ${problemText(err)}`, 'audit');
    }
  }

  /** Table labels of sessions older than the lists: read them once. */
  async function lookUpSessions(entries) {
    const ids = [...new Set(entries.map((e) => e.sessionId).filter((id) => id && !sessions.has(id)))].slice(0, 20);
    let found = false;
    for (const id of ids) {
      try {
        const s = await api(`/api/v1/sessions/${encodeURIComponent(id)}`);
        sessions.set(id, s);
        found = true;
      } catch (err) {
        if (err instanceof ApiProblem && err.status === 401) return;
      }
    }
    if (found) {
      for (const row of $('audit-list').children) {
        const s = sessions.get(row.dataset.sessionId);
        if (s) row.querySelector('[data-role=table]').textContent = s.tableLabel;
      }
    }
  }

  function auditRow(e) {
    const session = e.sessionId && sessions.get(e.sessionId);
    const ok = e.status >= 200 && e.status < 300;
    return h(
      'tr',
      { dataset: { requestId: e.requestId || '', code: e.code, sessionId: e.sessionId || '' } },
      h('td', {}, h('time', { datetime: e.at, text: formatDateTime(e.at) })),
      h('td', {
        dataset: { role: 'table' },
        text: session ? session.tableLabel : e.sessionId ? e.sessionId.slice(0, 8) : '—',
      }),
      h('td', {}, h('span', { class: `code ${ok ? 'code-ok' : 'code-refused'}`, text: e.code })),
      h('td', { class: 'num', text: String(e.status) }),
      h('td', { class: 'mono', text: e.clientId || 'staff' }),
      h('td', { class: 'mono', title: e.orderId || '', text: e.orderId ? `…${e.orderId.slice(-8)}` : '—' }),
    );
  }

  $('audit-refresh').addEventListener('click', async () => {
    const button = $('audit-refresh');
    button.setAttribute('aria-disabled', 'true');
    await load();
    button.removeAttribute('aria-disabled');
    announce('Audit refreshed.');
  });

  return { load, refreshSoon };
}
