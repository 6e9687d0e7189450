// guest-wait.js: how long food takes right now ("Food takes about 12 min
// right now"), from the shop's GET /api/v1/shops/{shopId}/wait: the median
// time from accepted to ready of the orders that became ready in the last
// hour. Shown next to "Place order" and, while the order placed last is
// with the kitchen, under the status box instead; nothing while the
// server has no estimate (estimatedMinutes null: fewer than 3 such orders).
//
// The estimate moves as orders become ready, so it is read again when the
// table's orders change (order.updated), when the stream comes back and
// when the page is shown again, but at most once per WAIT_GAP_MS: every
// phone of every table does this, and the server says the answer holds
// 30 s (Cache-Control: max-age=30).

import { getWait } from './order-sdk.js';
import { $ } from './guest-dom.js';
import { state, t } from './guest-page.js';

/**
 * The server's 30 s, and a second more: a read sooner would be answered
 * from the browser's cache with the very answer the page already has.
 */
export const WAIT_GAP_MS = 31_000;

/** Order statuses during which the guest is waiting for the food. */
const COOKING = new Set(['placed', 'accepted', 'preparing']);

/**
 * Calls `fn` (async) now, or once `gapMs` has passed since its last call
 * ended. Calls in between are merged into that one (so the last change is
 * always read); a call while `fn` runs makes one more afterwards.
 * Returns request(); request.cancel() drops a call that is waiting.
 */
export function createThrottle(fn, gapMs, {
  now = () => Date.now(),
  setTimer = (f, ms) => setTimeout(f, ms),
  clearTimer = (id) => clearTimeout(id),
} = {}) {
  let lastEnd = -Infinity;
  let timer = null;
  let running = false;
  let again = false;

  async function run() {
    timer = null;
    running = true;
    try {
      await fn();
    } catch {
      // fn reports its own failures; the next request tries again
    } finally {
      running = false;
      lastEnd = now();
    }
    if (again) {
      again = false;
      request();
    }
  }

  function request() {
    if (running) {
      again = true;
      return;
    }
    if (timer !== null) return;
    const due = lastEnd + gapMs - now();
    if (due <= 0) run();
    else timer = setTimer(run, due);
  }
  request.cancel = () => {
    if (timer !== null) clearTimer(timer);
    timer = null;
    again = false;
  };
  return request;
}

let shopId = null;
const readAgain = createThrottle(readWait, WAIT_GAP_MS);

/** Starts showing the estimate of `id`'s kitchen (read now). */
export function startWait(id) {
  shopId = id;
  readAgain();
}

/** The table's orders moved, or the page is back: the estimate may have changed. */
export function waitMayHaveChanged() {
  if (shopId && !state.closed) readAgain();
}

/** The table is closed: no more reads, nothing shown. */
export function stopWait() {
  readAgain.cancel();
  shopId = null;
  renderWait();
}

async function readWait() {
  if (!shopId) return;
  try {
    const wait = await getWait({ shopId });
    const minutes = wait?.estimatedMinutes;
    state.waitMinutes = Number.isInteger(minutes) && minutes >= 0 ? minutes : null;
  } catch {
    // Unreachable for now: the last estimate stays until a read succeeds.
  }
  renderWait();
}

/** Puts the estimate where the guest looks: under the status while the last order cooks, else by "Place order". */
export function renderWait() {
  const minutes = state.closed ? null : state.waitMinutes;
  const status = $('status');
  const cooking = status.dataset.state === 'success' && COOKING.has(status.dataset.orderStatus);
  show($('wait'), cooking ? null : minutes);
  show($('status-wait'), cooking ? minutes : null);
}

function show(node, minutes) {
  node.hidden = minutes == null;
  if (minutes == null) {
    node.textContent = '';
    delete node.dataset.minutes;
    return;
  }
  node.dataset.minutes = String(minutes);
  // 0: orders went from accepted to ready within the minute (drinks bumped
  // at once); "about 0 min" would read as a mistake.
  node.textContent = minutes < 1 ? t('wait.underMinute') : t('wait.estimate', { n: minutes });
}
