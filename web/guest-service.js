// guest-service.js: "Call staff" and "Ask for the bill". A tap goes through
// order-sdk.js (client.callStaff: one Idempotency-Key per intended request
// through its retries, a second tap joins the first); the server keeps one
// open request per kind and table, and answers 200 with that one when it is
// open already. What the guest sees follows the request: "Calling staff…"
// until staff acknowledge it, then "Staff are on the way." for
// ACK_SHOWN_MS, then the buttons are as before.
//
// The table's stream tells every phone at the table (service.requested,
// service.acknowledged), so a call made from one phone shows on all. There
// is no guest read of a table's requests, so the page keeps the ones it
// knows of in sessionStorage ('ordergate.service.<sessionId>') and shows
// them again after a reload; events and answers settle them from there.

import { SERVICE_KINDS } from './order-sdk.js';
import { $, el, announce } from './guest-dom.js';
import { state, hooks, t, timeOf } from './guest-page.js';

const STORAGE_PREFIX = 'ordergate.service.';
/** How long "Staff are on the way." stays after staff acknowledged (ms). */
export const ACK_SHOWN_MS = 5 * 60 * 1000;

/** kind → the callStaff promise the page waits for (a tap while it runs does nothing). */
const pending = new Map();
/** kind → the error of the last tap, until the next tap or news of the request. */
const failed = new Map();
let ackTimer = null;
/** The panel is on screen: the top bar's badge would only repeat it. */
let panelInView = true;

function storageKey() {
  return STORAGE_PREFIX + state.sessionId;
}

/** The request as the page keeps it; seenAt: when this phone learnt its status (ms, the phone's clock). */
function record(request, now) {
  return {
    requestId: String(request.requestId),
    kind: request.kind,
    status: request.status === 'acknowledged' ? 'acknowledged' : 'open',
    createdAt: request.createdAt ?? null,
    seenAt: now,
  };
}

/**
 * What the page knows of a kind once `request` is heard of (an answer or an
 * event): `known` (the record so far, or null) → the record to keep. A
 * request older than the known one is news of the past; an acknowledged
 * request is not made open again by a late event about it.
 */
export function settle(known, request, now = Date.now()) {
  if (!request?.requestId || !SERVICE_KINDS.includes(request.kind)) return known;
  if (!known) return record(request, now);
  if (known.requestId === String(request.requestId)) {
    if (known.status === 'acknowledged' || request.status !== 'acknowledged') return known;
    return record(request, now);
  }
  const older = Date.parse(request.createdAt) < Date.parse(known.createdAt);
  return older ? known : record(request, now);
}

/** Drops what is no longer worth showing: "on the way" after ACK_SHOWN_MS. */
export function current(records, now = Date.now()) {
  const out = {};
  for (const kind of SERVICE_KINDS) {
    const r = records?.[kind];
    if (!r || typeof r.requestId !== 'string' || r.kind !== kind) continue;
    if (r.status === 'acknowledged' && !(now - r.seenAt < ACK_SHOWN_MS)) continue;
    out[kind] = r;
  }
  return out;
}

/** The table's requests this tab knew of, after a reload. */
export function loadService() {
  let saved = null;
  try { saved = JSON.parse(sessionStorage.getItem(storageKey()) ?? 'null'); } catch { /* none, or damaged */ }
  state.service = current(saved);
  renderService();
}

function saveService() {
  try {
    if (Object.keys(state.service).length) sessionStorage.setItem(storageKey(), JSON.stringify(state.service));
    else sessionStorage.removeItem(storageKey());
  } catch { /* this visit only */ }
}

function keep(kind, request) {
  const next = settle(state.service[kind] ?? null, request);
  if (next === state.service[kind]) return;
  state.service = current({ ...state.service, [kind]: next });
  failed.delete(kind);
  saveService();
}

/** A tap on "Call staff" (kind 'call') or "Ask for the bill" ('bill'). */
export async function requestService(kind) {
  if (state.closed || !state.client || pending.has(kind)) return;
  failed.delete(kind);
  const promise = state.client.callStaff(kind);
  pending.set(kind, promise);
  renderService();
  try {
    const { request, alreadyOpen } = await promise;
    keep(kind, request);
    // Someone at the table (or an earlier tap) asked already: one request, said once.
    if (alreadyOpen) announce(t(`service.${kind}.already`));
  } catch (err) {
    if (err?.code === 'SESSION_CLOSED') hooks.setClosed();
    else if (err?.code === 'ACCESS_ENDED') hooks.setAccessEnded();
    else failed.set(kind, err);
  } finally {
    pending.delete(kind);
    renderService();
  }
}

/** service.requested / service.acknowledged on the table's stream. */
export function applyServiceEvent(request) {
  if (!request || request.sessionId !== state.sessionId) return;
  keep(request.kind, request);
  renderService();
}

/** The table is closed (checked out, or the page cannot reach it): nothing more to ask for. */
export function closeService() {
  state.service = {};
  failed.clear();
  saveService();
  renderService();
}

/** idle | sending | open | acknowledged | error, for `kind`. */
function viewOf(kind) {
  const r = state.service[kind];
  // A new call after staff came: it is sent, whatever was before.
  if (pending.has(kind) && r?.status !== 'open') return 'sending';
  if (r) return r.status;
  if (failed.has(kind)) return 'error';
  return 'idle';
}

function text(kind, view) {
  const r = state.service[kind];
  if (view === 'open') {
    const time = r?.createdAt ? timeOf(r.createdAt) : '';
    return time ? t(`service.${kind}.openSince`, { time }) : t(`service.${kind}.open`);
  }
  if (view === 'sending') return t(`service.${kind}.open`);
  if (view === 'acknowledged') return t(`service.${kind}.acknowledged`);
  return t(`service.${kind}.failed`);
}

export function renderService() {
  const panel = $('service');
  // Only an open table can be asked for anything.
  panel.hidden = state.closed || !state.session;
  const lines = [];
  for (const kind of SERVICE_KINDS) {
    const view = state.closed ? 'idle' : viewOf(kind);
    panel.dataset[`${kind}State`] = view;
    if (view === 'idle') continue;
    lines.push(el('p', {
      class: 'service-line', 'data-kind': kind, 'data-state': view, 'data-request-id': state.service[kind]?.requestId,
    }, text(kind, view)));
  }
  $('service-status').replaceChildren(...lines);
  for (const button of panel.querySelectorAll('button[data-kind]')) {
    button.setAttribute('aria-busy', String(pending.has(button.dataset.kind)));
  }
  renderBadge();
  armAckExpiry();
}

/** Whether the panel is on screen (guest.js watches it). */
export function setServiceInView(inView) {
  panelInView = inView;
  renderBadge();
}

/**
 * The top bar's short word on it, for a guest scrolled away from the
 * panel; a tap goes back to the panel.
 */
function renderBadge() {
  const badge = $('service-badge');
  const views = state.closed ? [] : SERVICE_KINDS.map(viewOf);
  const shown = views.includes('acknowledged') ? 'acknowledged'
    : views.some((v) => v === 'open' || v === 'sending') ? 'open' : null;
  badge.hidden = !shown || panelInView;
  if (shown) {
    badge.dataset.state = shown;
    badge.textContent = t(`service.badge.${shown}`);
  } else {
    delete badge.dataset.state;
    badge.textContent = '';
  }
}

/** "On the way" goes by itself once ACK_SHOWN_MS have passed. */
function armAckExpiry() {
  clearTimeout(ackTimer);
  ackTimer = null;
  const acked = Object.values(state.service).filter((r) => r.status === 'acknowledged');
  if (!acked.length) return;
  const due = Math.min(...acked.map((r) => r.seenAt + ACK_SHOWN_MS)) - Date.now();
  ackTimer = setTimeout(() => {
    state.service = current(state.service);
    saveService();
    renderService();
  }, Math.max(0, due) + 50);
}
