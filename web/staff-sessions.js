// Staff console: the parties seated now and lately (sessions). The
// open-by-name form, the table card of a session (its PIN, big, and the QR
// code of its guest link), the open tables with their actions, and the
// recently closed ones. Its hooks are listed in staff.js ("Tables").

import {
  api,
  announce,
  clearProblem,
  formatAge,
  formatDateTime,
  h,
  problemText,
  serverNow,
  showProblem,
} from './console.js';
import { $, fieldError, printOnly, replaceRows } from './staff-dom.js';
import { qrSvg } from './staff-qr.js';

/**
 * ctx: {shopPath, keys (IntentKeys), sessions (Map by id, shared with the
 * other parts), refreshSoon() (sessions and tables re-read soon),
 * openBill(session, mode, opener), openOrder(session, opener), onChange()
 * (after the lists changed: the floor follows)}.
 */
export function createSessions(ctx) {
  const { shopPath, keys, sessions } = ctx;
  let recentClosed = [];

  $('open-table-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = $('table-label');
    const error = $('open-table-error');
    const label = input.value.trim();
    fieldError(input, error, '');
    if (!label) {
      fieldError(input, error, 'Enter a table name.');
      return;
    }
    const submit = event.target.querySelector('button[type=submit]');
    const intent = `open-table:${label}`;
    submit.disabled = true;
    try {
      const session = await api(`${shopPath}/sessions`, {
        method: 'POST',
        body: { tableLabel: label },
        key: keys.get(intent),
        retries: 2,
      });
      keys.forget(intent);
      input.value = '';
      opened(session);
    } catch (err) {
      if (!err.retryable) keys.forget(intent);
      if (err.status !== 401) fieldError(input, error, problemText(err));
    } finally {
      submit.disabled = false;
    }
  });

  /** A session just opened here (by name or from the floor): the card, with its PIN big. */
  function opened(session) {
    sessions.set(session.sessionId, session);
    render();
    showCard(session);
    $('table-card').focus();
    announce(`Table ${session.tableLabel} is open. PIN ${session.pin.split('').join(' ')}.`);
    ctx.refreshSoon();
  }

  function showCard(session) {
    const card = $('table-card');
    card.dataset.sessionId = session.sessionId;
    $('table-card-label').textContent = session.tableLabel;
    // Two groups of three digits read out best; the text stays the PIN.
    const pin = session.pin || '';
    $('table-pin').replaceChildren(
      h('span', { class: 'pin-group', text: pin.slice(0, 3) }),
      h('span', { class: 'pin-group', text: pin.slice(3) }),
    );
    const link = $('table-guest-url');
    link.href = session.guestUrl || '/';
    const qr = $('table-qr');
    qr.dataset.guestUrl = session.guestUrl || '';
    qr.replaceChildren(session.guestUrl ? qrSvg(session.guestUrl, `QR code for table ${session.tableLabel}`) : '');
    card.hidden = false;
    card.scrollIntoView({ block: 'nearest' });
  }

  $('table-card-close').addEventListener('click', () => {
    $('table-card').hidden = true;
    $('table-label').focus();
  });

  $('table-card-print').addEventListener('click', () => printOnly('print-card'));

  async function load() {
    try {
      const [active, closed] = await Promise.all([
        api(`${shopPath}/sessions?status=active&limit=500`, { retries: 2 }),
        api(`${shopPath}/sessions?status=closed&limit=10`, { retries: 2 }),
      ]);
      for (const [id, s] of sessions) if (s.status === 'active') sessions.delete(id);
      for (const s of [...active.sessions, ...closed.sessions]) sessions.set(s.sessionId, s);
      recentClosed = closed.sessions.map((s) => s.sessionId);
      render();
      clearProblem('tables');
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the tables: ${problemText(err)}`, 'tables');
    }
  }

  function render() {
    const active = activeSessions();
    const closed = recentClosed.map((id) => sessions.get(id)).filter(Boolean);
    replaceRows($('active-list'), active.map(activeRow));
    replaceRows($('closed-list'), closed.map(closedRow));
    const card = $('table-card');
    const shown = !card.hidden && sessions.get(card.dataset.sessionId);
    if (shown && shown.status !== 'active') card.hidden = true; // checked out elsewhere
    $('active-count').textContent = String(active.length);
    $('active-empty').hidden = active.length > 0;
    $('closed-empty').hidden = closed.length > 0;
    ctx.onChange();
  }

  function activeSessions() {
    return [...sessions.values()]
      .filter((s) => s.status === 'active')
      .sort((a, b) => a.tableLabel.localeCompare(b.tableLabel, undefined, { numeric: true }));
  }

  /** A session was checked out here: it moves to the closed list at once. */
  function closedHere(session, closedAt) {
    sessions.set(session.sessionId, { ...session, status: 'closed', closedAt });
    recentClosed = [session.sessionId, ...recentClosed.filter((id) => id !== session.sessionId)].slice(0, 10);
    render();
    if (!$('table-card').hidden && $('table-card').dataset.sessionId === session.sessionId) $('table-card').hidden = true;
  }

  /** Wrong PINs lock a table until pinLockedUntil; the lock lapses by itself then. */
  function pinLocked(s) {
    return Boolean(s.pinLockedUntil) && Date.parse(s.pinLockedUntil) > serverNow();
  }

  function activeRow(s) {
    const locked = pinLocked(s);
    return h(
      'tr',
      {
        id: rowId(s.sessionId),
        tabindex: '-1',
        dataset: { sessionId: s.sessionId, tableLabel: s.tableLabel, status: s.status, pinLocked: String(locked) },
        class: locked ? 'is-locked' : null,
      },
      h('th', { scope: 'row', class: 'table-label', text: s.tableLabel }),
      h(
        'td',
        {},
        h('span', { class: 'pin-cell', dataset: { role: 'pin' }, text: s.pin || '—' }),
        locked
          ? h('span', {
              class: 'badge badge-locked',
              dataset: { role: 'pin-lock' },
              title: 'Too many wrong PINs: guests who have not opened the table yet cannot get in',
              text: `Locked until ${formatDateTime(s.pinLockedUntil)}`,
            })
          : null,
      ),
      h('td', {}, h('time', { datetime: s.openedAt, text: `${formatDateTime(s.openedAt)} · ${formatAge(s.openedAt)}` })),
      h(
        'td',
        { class: 'actions' },
        h('button', {
          type: 'button',
          class: 'btn btn-small',
          dataset: { action: 'add-order' },
          'aria-haspopup': 'dialog',
          'aria-label': `Add an order for table ${s.tableLabel}`,
          text: 'Add order',
        }),
        h('button', {
          type: 'button',
          class: 'btn btn-small',
          dataset: { action: 'show-qr' },
          'aria-label': `Show the QR code and PIN of table ${s.tableLabel}`,
          text: 'PIN & QR',
        }),
        locked
          ? h('button', {
              type: 'button',
              class: 'btn btn-small btn-danger',
              dataset: { action: 'unlock' },
              'aria-label': `Unlock the PIN of table ${s.tableLabel}`,
              text: 'Unlock',
            })
          : null,
        h('button', {
          type: 'button',
          class: 'btn btn-small btn-primary',
          dataset: { action: 'checkout' },
          'aria-haspopup': 'dialog',
          'aria-label': `Check out table ${s.tableLabel}`,
          text: 'Check out',
        }),
      ),
    );
  }

  function closedRow(s) {
    return h(
      'tr',
      { dataset: { sessionId: s.sessionId, tableLabel: s.tableLabel, status: s.status } },
      h('th', { scope: 'row', class: 'table-label', text: s.tableLabel }),
      h('td', {}, h('time', { datetime: s.openedAt, text: formatDateTime(s.openedAt) })),
      h('td', {}, s.closedAt ? h('time', { datetime: s.closedAt, text: formatDateTime(s.closedAt) }) : '—'),
      h(
        'td',
        { class: 'actions' },
        h('button', {
          type: 'button',
          class: 'btn btn-small',
          dataset: { action: 'bill' },
          'aria-haspopup': 'dialog',
          'aria-label': `Show the bill of table ${s.tableLabel}`,
          text: 'Bill',
        }),
      ),
    );
  }

  for (const id of ['active-list', 'closed-list']) {
    $(id).addEventListener('click', (event) => {
      const button = event.target.closest('button[data-action]');
      if (!button) return;
      const session = sessions.get(button.closest('tr').dataset.sessionId);
      if (!session) return;
      const action = button.dataset.action;
      if (action === 'show-qr') {
        showCard(session);
        $('table-card').focus();
        announce(`Showing the QR code and PIN of table ${session.tableLabel}.`);
      } else if (action === 'add-order') ctx.openOrder(session, button);
      else if (action === 'unlock') unlock(session, button);
      else if (action === 'checkout') ctx.openBill(session, 'preview', button);
      else if (action === 'bill') ctx.openBill(session, 'closed', button);
    });
  }

  async function unlock(session, button) {
    const focused = document.activeElement === button;
    button.disabled = true;
    try {
      // Lifting a lock twice is lifting it once: a plain retry is safe.
      const unlocked = await api(`/api/v1/sessions/${encodeURIComponent(session.sessionId)}/unlock`, {
        method: 'POST',
        retries: 2,
      });
      sessions.set(unlocked.sessionId, unlocked);
      render();
      clearProblem('tables');
      announce(`Table ${unlocked.tableLabel} is unlocked: its guests can use the PIN again.`);
      // The Unlock button is gone with the lock: keep the focus on its row.
      if (focused) $('active-list').querySelector(`#${rowId(unlocked.sessionId)} [data-action=show-qr]`)?.focus();
      ctx.refreshSoon();
    } catch (err) {
      button.disabled = false;
      if (err.status !== 401) showProblem(`Could not unlock table ${session.tableLabel}: ${problemText(err)}`, 'tables');
    }
  }

  /** Bring an open table's row into view and give it the focus (from the floor, a call, …). */
  function focusRow(sessionId) {
    const row = document.getElementById(rowId(sessionId));
    if (!row) return false;
    row.scrollIntoView({ block: 'center' });
    row.focus({ preventScroll: true });
    row.classList.remove('is-pointed');
    // Restart the highlight: a second jump to the same row flashes it again.
    void row.offsetWidth;
    row.classList.add('is-pointed');
    return true;
  }

  return { load, render, opened, closedHere, focusRow, activeSessions };
}

/** The id of an open table's row (the floor and the calls link to it). */
export function rowId(sessionId) {
  return `session-${sessionId}`;
}
