// guest-table.js: the permanent table card, /q/{code}, the QR code printed
// once per table. The card names a table, not a party: GET
// /api/v1/tables/{code} says which session is seated there now, if any.
//   - Nobody seated: "This table is not open yet", looked at again every
//     POLL_MS while the page is shown, and at once when it is shown again
//     (or the connection is back), so it opens by itself when staff seat
//     the party.
//   - A party seated, and this tab holds that session's guest token
//     (sessionStorage, kept per session by order-sdk.js): straight in, no
//     PIN. A token of an earlier party at this table is never even looked
//     at: it is stored under that party's session.
//   - Else the PIN staff gave the party is asked for, and order-sdk.js
//     trades it for the guest token on the first read of the session. The
//     page says what the server said (wrong PIN, locked for a while), no
//     more: the server does not say how many tries are left.
// While the PIN page is up, the table is looked at again when the page is
// shown again and after a wrong PIN, in case staff seated another party.

import { getTable, getShop } from './order-sdk.js';
import { $ } from './guest-dom.js';
import { state, t } from './guest-page.js';

/** How often a table not open yet is looked at again (ms). */
export const POLL_MS = 5000;
/** No answer from the server: wait this long before the next look (ms), step by step. */
const RETRY_MS = [2000, 5000, 10000, 20000, 30000];
export const PIN_DIGITS = 6;

/** Digits as typed on any keyboard (full-width ones from a Japanese IME, spaces, dashes), at most six. */
export function normalizePin(text) {
  return String(text ?? '')
    .replace(/[０-９]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0xfee0))
    .replace(/\D/g, '')
    .slice(0, PIN_DIGITS);
}

/** The gate's texts again, in the language just chosen (set while the gate is shown). */
let retext = () => {};
export function retextGate() {
  retext();
}

/**
 * Shows the gate (#gate) for the card `code` until the guest is in.
 * Resolves to {sessionId, client, pin, session} (pin null when a stored
 * token opened it), or {error} for a card the server does not know.
 * options:
 *   makeClient(sessionId, pin)  the page's order client for that session
 *   onShop(shop)                the card's shop once read (null if it could
 *                               not be), before any text of the gate shows
 *                               in its language
 */
export function enterTable(code, { makeClient, onShop }) {
  const gate = $('gate');
  const form = $('pin-form');
  const input = $('pin-input');
  const submit = $('pin-submit');

  let phase = null; // checking | not-open | offline | pin
  let sessionId = null; // the session the PIN page is for
  let shopId = null;
  let status = null; // {key} of #gate-status
  let error = null; // {key, invalid, seconds} of #pin-error
  let looking = null;
  let pollTimer = null;
  let lockTimer = null;
  let failures = 0;
  let submitting = false;
  let done = null;

  function show(next, say = null) {
    phase = next;
    gate.dataset.state = next;
    form.hidden = next !== 'pin';
    status = say;
    render();
  }

  function render() {
    $('gate-title').textContent = state.tableName ? t('table.label', { table: state.tableName }) : t('shop.fallback');
    $('gate-status').textContent = status ? t(status.key) : '';
    let text = '';
    if (error?.key === 'pin.locked') {
      text = t('pin.locked', { minutes: t('time.minutes', { n: Math.max(1, Math.ceil((error.seconds ?? 60) / 60)) }) });
    } else if (error) {
      text = t(error.key);
    }
    $('pin-error').textContent = text;
    $('pin-error').hidden = !text;
    if (error?.invalid) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    submit.textContent = submitting ? t('pin.checking') : t('pin.submit');
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(() => {
      pollTimer = null;
      // A phone in a pocket asks nothing; being shown again looks at once.
      if (document.visibilityState !== 'hidden') lookup();
    }, ms);
  }

  function lookup() {
    clearTimeout(pollTimer);
    pollTimer = null;
    looking ??= (async () => {
      let table;
      try {
        table = await getTable({ code });
      } catch (err) {
        if (err?.code === 'NOT_FOUND') {
          finish({ error: err });
          return;
        }
        failures += 1;
        // The PIN page stays usable: the PIN is judged when it is sent.
        if (phase !== 'pin') show('offline', { key: 'problem.network' });
        schedule(RETRY_MS[Math.min(failures, RETRY_MS.length) - 1]);
        return;
      }
      failures = 0;
      state.tableName = table.tableName ?? null;
      if (table.shopId !== shopId) {
        shopId = table.shopId;
        let shop = null;
        try { shop = await getShop({ shopId }); } catch { /* its name and languages stay unknown for now */ }
        await onShop(shop);
      }
      await seat(table.sessionId ?? null);
    })().finally(() => { looking = null; });
    return looking;
  }

  /** The table's session as the card says it now. */
  async function seat(seated) {
    if (done) return;
    if (!seated) {
      sessionId = null;
      show('not-open', { key: 'gate.notOpen' });
      schedule(POLL_MS);
      return;
    }
    if (seated === sessionId && phase === 'pin') {
      render();
      return;
    }
    const reseated = sessionId !== null && phase === 'pin';
    const opened = phase === 'not-open';
    sessionId = seated;
    const client = makeClient(seated, null);
    if (client.hasToken) {
      try {
        const session = await client.getSession();
        if (session?.status !== 'closed') {
          finish({ sessionId: seated, client, pin: null, session });
          return;
        }
      } catch (err) {
        // A token refused (expired: the SDK dropped it) asks for the PIN;
        // a table closed since the card was read is looked at again.
        if (err?.code !== 'ACCESS_ENDED') {
          sessionId = null;
          show(err?.code === 'SESSION_CLOSED' || err?.code === 'NOT_FOUND' ? 'checking' : 'offline',
            { key: err?.code === 'SESSION_CLOSED' || err?.code === 'NOT_FOUND' ? 'gate.checking' : 'problem.network' });
          schedule(RETRY_MS[0]);
          return;
        }
      }
    }
    askPin({ opened, reseated });
  }

  function askPin({ opened, reseated }) {
    error = reseated ? { key: 'pin.tableChanged' } : null;
    input.value = '';
    show('pin', opened ? { key: 'gate.opened' } : null);
    input.focus();
  }

  function fail(next) {
    error = next;
    render();
    input.focus();
    input.select();
  }

  /** PIN_LOCKED: sending is pointless until Retry-After has passed. */
  function lock(seconds) {
    clearTimeout(lockTimer);
    submit.disabled = true;
    lockTimer = setTimeout(() => {
      lockTimer = null;
      submit.disabled = false;
    }, Math.max(1, seconds ?? 60) * 1000);
    fail({ key: 'pin.locked', seconds });
  }

  async function onSubmit(e) {
    e.preventDefault();
    if (submitting || lockTimer || !sessionId) return;
    const pin = normalizePin(input.value);
    input.value = pin;
    if (pin.length !== PIN_DIGITS) {
      fail({ key: 'pin.incomplete', invalid: true });
      return;
    }
    const seated = sessionId;
    const client = makeClient(seated, pin);
    submitting = true;
    submit.setAttribute('aria-busy', 'true');
    render();
    let session = null;
    let failure = null;
    try {
      session = await client.getSession();
    } catch (err) {
      failure = err;
    }
    submitting = false;
    submit.removeAttribute('aria-busy');
    if (session && session.status !== 'closed') {
      finish({ sessionId: seated, client, pin, session });
      return;
    }
    const code = session ? 'SESSION_CLOSED' : failure?.code;
    if (code === 'PIN_INVALID') {
      fail({ key: 'pin.invalid', invalid: true });
      // Or the party it was for has gone and another was seated since.
      lookup();
    } else if (code === 'PIN_LOCKED') {
      lock(failure.retryAfter);
    } else if (code === 'SESSION_CLOSED' || code === 'NOT_FOUND') {
      error = null;
      render();
      lookup();
    } else {
      fail({ key: 'pin.unreachable' });
    }
  }

  function onInput() {
    const digits = normalizePin(input.value);
    if (digits !== input.value) input.value = digits;
    if (error?.invalid) {
      error = null;
      render();
    }
  }

  function onShown() {
    if (document.visibilityState !== 'hidden' && phase !== 'checking') lookup();
  }
  const onPageShow = (e) => { if (e.persisted) onShown(); };

  function finish(result) {
    done = result;
    clearTimeout(pollTimer);
    clearTimeout(lockTimer);
    form.removeEventListener('submit', onSubmit);
    input.removeEventListener('input', onInput);
    document.removeEventListener('visibilitychange', onShown);
    window.removeEventListener('pageshow', onPageShow);
    window.removeEventListener('online', onShown);
    retext = () => {};
    gate.hidden = true;
    resolveEntry(result);
  }

  let resolveEntry;
  const entry = new Promise((resolve) => { resolveEntry = resolve; });
  form.addEventListener('submit', onSubmit);
  input.addEventListener('input', onInput);
  document.addEventListener('visibilitychange', onShown);
  window.addEventListener('pageshow', onPageShow);
  window.addEventListener('online', onShown);
  retext = render;
  gate.hidden = false;
  show('checking', { key: 'gate.checking' });
  lookup();
  return entry;
}
