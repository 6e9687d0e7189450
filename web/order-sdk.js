/**
 * order-sdk.js: the browser client for ordergate's exactly-once order path.
 *
 * A plain ES module with no dependencies. It touches no browser global when
 * it is imported, so Node can import it for tests. Every dependency can be
 * injected (fetch, storage, clock, sleep, timers, randomness, EventSource).
 *
 * ── Placing orders ───────────────────────────────────────────────────────
 *
 *   import { createOrderClient } from '/web/order-sdk.js';
 *   const client = createOrderClient({ sessionId, pin });
 *   const result = await client.submit(
 *     { items: [{ menuItemId, quantity: 2, toppingIds: [...],
 *                 optionIds: [...], note: 'no salt' }],   // both optional
 *       note: 'no onions' },
 *     { allowRepeat: false },
 *   );
 *   // result = { outcome, alreadyPlaced, order, attempts, idempotencyKey }
 *   //   outcome: 'placed'     201, first answer
 *   //            'replayed'   201 with idempotentReplay (an earlier attempt's
 *   //                         response was lost, the server replayed it)
 *   //            'duplicate'  409 DUPLICATE_PAYLOAD: this device placed the
 *   //                         same cart moments ago; `order` is that order
 *   //                         and `alreadyPlaced` is true
 *   //            'reconciled' retries ran out, but the table's order list
 *   //                         shows the order was placed
 *
 * createOrderClient(options) takes:
 *   sessionId (required), pin (6 digits; may be left out when this tab
 *   holds the session's guest token, see below), baseUrl ('' = same origin),
 *   clientId (default: persisted per device, see below),
 *   fetch, storage (getItem/setItem/removeItem; default localStorage, falls
 *   back to memory), now() → ms, sleep(ms) → Promise, setTimeout/clearTimeout
 *   (request timeouts), random() → [0,1), randomUUID() → UUID v4 string,
 *   timeoutMs (10000, per request, via AbortController), maxAttempts (6),
 *   maxElapsedMs (30000, no retry starts after this), baseDelayMs (500),
 *   maxDelayMs (8000), reconcileLimit (50), reconcileWindowMs (300000: while
 *   the server's clock is unknown, how long before the key was made an order
 *   may have been created and still count in reconciliation; once an answer
 *   carried a Date header, 5 s on the server's clock is used instead),
 *   keyTtlMs (23 h, how long a stored key is reused after a reload),
 *   tokenStorage (where the guest token is kept; default sessionStorage,
 *   falls back to memory), exchangeRetryMs (30000: after an exchange that
 *   failed, how long the PIN is used before the next one is tried),
 *   onProgress(event), onToken(held) (called with true when a guest token
 *   is stored, false when it is dropped).
 *
 * The client has:
 *   clientId                    this device's X-Client-Id
 *   submit(cart, {allowRepeat}) → Promise<result>, see above
 *   pending                     true while a submit runs
 *   currentKey                  the Idempotency-Key of the current cart, or null
 *   keyFor(cart, {allowRepeat}) the key submit(cart) would use now (creates it)
 *   pendingKeyFor(cart, {allowRepeat})  the key kept for this cart (also
 *                               across a reload), or null; creates nothing
 *   hasToken                    true while a guest token is held
 *   hasAccess                   true while there is a credential to send (a
 *                               token or the PIN)
 *   getSession()                GET /api/v1/sessions/{id}
 *   listOrders({limit})         GET /api/v1/sessions/{id}/orders → orders[]
 *   subscribeEvents(options)    the table's event stream with the client's
 *                               credential, see "Live events" below
 *   callStaff(kind)             calls staff to the table ('call') or asks for
 *                               the bill ('bill'), see "Service requests" below
 *
 * ── Guest token or PIN ───────────────────────────────────────────────────
 *
 * PIN checks can be locked by other people's wrong guesses: a few at the
 * table lock the table, more from the same address (a restaurant's Wi-Fi)
 * lock the address. So the client trades the PIN once for a guest token
 * (POST /api/v1/sessions/{id}/access with X-Session-PIN), which no PIN
 * lockout refuses, and sends that instead of the PIN on every call:
 * `Authorization: Bearer <token>`, `?access_token=` on the stream.
 * Never both: when a PIN is sent, the server judges the PIN.
 *   - The exchange happens on the first call that needs a credential; calls
 *     made meanwhile wait for it. The token is kept in tokenStorage under
 *     'ordergate.guestToken.<sessionId>', so a reload in the same tab keeps
 *     it and each table has its own.
 *   - An exchange refused PIN_INVALID, PIN_LOCKED or SESSION_CLOSED is the
 *     answer to the call that needed it: the PIN would be refused the same
 *     way, and a wrong one would count once more.
 *   - Any other failed exchange (no answer, a 5xx, a v1 server without it)
 *     leaves the PIN as the credential; the exchange is tried again on the
 *     first call after exchangeRetryMs.
 *   - A token answered 401 UNAUTHORIZED (expired, or unknown to the server)
 *     is dropped, traded in again and the call sent once more. One answered
 *     410 SESSION_CLOSED is dropped (tokens die at checkout).
 *   - Without a PIN (a page that dropped it from its address once it had
 *     the token, then reloaded) the stored token is the only credential.
 *     Once it is refused (expired, or dead since checkout: the server
 *     answers 401 for both) there is nothing to trade in: the call rejects
 *     with ACCESS_ENDED, and the table's stream ends with it.
 *
 * The rules submit() follows:
 *   - One Idempotency-Key (UUID v4) per cart. The key is kept through every
 *     retry and re-tap. It changes only when the cart changes (carts are
 *     compared in canonical form, see canonicalCart) or an order is
 *     confirmed. The key and its cart are also kept in storage, so a reload
 *     during a lost response re-sends the same key.
 *   - A second submit of the same cart while one is running returns the same
 *     promise and sends nothing. A different cart while one is running is
 *     refused with OrdergateError code ORDER_PENDING.
 *   - These are retried with the same key after exponential backoff with
 *     jitter (never sooner than Retry-After): network failures, timeouts,
 *     5xx (except CATALOG_NOT_READY), 409 REQUEST_IN_PROGRESS, 409
 *     SESSION_BUSY, and 429 other than PIN_LOCKED and SESSION_RATE_LIMITED
 *     (COOLDOWN_ACTIVE). The key makes every retry safe. Retries stop after
 *     maxAttempts attempts or once maxElapsedMs has passed.
 *   - Every attempt carries the credential in force when it is sent; the
 *     key and body never change with it. A token refused 401 UNAUTHORIZED
 *     is traded in and the same key sent again at once. A token refused
 *     410 SESSION_CLOSED is followed by one more attempt with the PIN and
 *     the same key: a key committed before checkout still gets its replay
 *     that way, and a new order is refused SESSION_CLOSED.
 *   - 409 DUPLICATE_PAYLOAD → outcome 'duplicate' with the problem's
 *     originalOrder.
 *   - When the retries run out, the client reads the table's orders. An
 *     order of this client id with this cart, created since the key was made
 *     (see reconcileWindowMs) and not already reported, counts as placed
 *     ('reconciled'). Otherwise submit rejects with NOT_CONFIRMED. The key
 *     stays, so tapping again is safe.
 *   - Any other problem (401 PIN_INVALID, 429 PIN_LOCKED, 429
 *     SESSION_RATE_LIMITED (the table's order limit: Retry-After says when
 *     it may order again; show it), 410 SESSION_CLOSED, 409 OUT_OF_STOCK
 *     with `shortages`, 422 VALIDATION_FAILED, 422 INVALID_OPTIONS (choices
 *     that break an option group: `errors` [{field: "items[0].optionIds",
 *     groupId, message}]), ...) rejects at once with an OrdergateError that
 *     carries the problem body. No retry.
 *   - A cart that cannot be valid (no lines, more than 50 lines, a quantity
 *     outside 1–99, a note over 200 characters; on a line more than 50
 *     options or one twice, a line note over 140 characters or not one line
 *     of visible text) rejects with INVALID_CART (`reason`: empty | lines |
 *     quantity | item | options | line-note | note; `line`: the line's
 *     index). Nothing is sent.
 *   - Lines go out as given: menuItemId, quantity, toppingIds, and optionIds
 *     and the trimmed line note when the line has them (a line without them
 *     is sent exactly as before they existed).
 *
 * onProgress receives {phase, attempt, ...}. phase is 'sending' (attempt 1),
 * 'retrying' (attempt > 1), 'waiting' (with delayMs and reason: the code
 * that caused the retry) or 'reconciling'. A page can show "still sending"
 * from these instead of an error.
 *
 * OrdergateError (extends Error): code, status (0 when no HTTP answer),
 * problem (the RFC 9457 body or null), retryAfter (seconds or null),
 * shortages (OUT_OF_STOCK), errors (VALIDATION_FAILED, INVALID_OPTIONS:
 * the problem's `errors`), reason and line (INVALID_CART), checked (NOT_CONFIRMED: true when the order
 * list was read and the order was not in it). Codes the SDK makes itself:
 * ORDER_PENDING, INVALID_CART, NETWORK_ERROR, TIMEOUT, NOT_CONFIRMED,
 * ACCESS_ENDED (no PIN, and the guest token was refused or is not there),
 * INVALID_KIND (callStaff), HTTP_<status> (an answer with no problem code).
 *
 * ── Service requests ─────────────────────────────────────────────────────
 *
 *   const { request, alreadyOpen } = await client.callStaff('call'); // or 'bill'
 *   // request = {requestId, kind, status: 'open'|'acknowledged', createdAt,
 *   //            acknowledgedAt, sessionId, tableLabel, ...} as the server has it
 *   // alreadyOpen: the server answered 200, one of that kind was open already
 *   //              (another tap, another phone at the table): that is the one
 *   // replayed:    the answer to an earlier attempt with the same key
 *
 * POST /api/v1/sessions/{id}/service-requests {"kind"} with the client's
 * credential. The server keeps one open request per kind and table, so
 * every tap may safely send; the client still sends as little as it can:
 *   - One Idempotency-Key per intended request of a kind, kept through every
 *     retry and re-tap until an answer confirms a request (then the next
 *     call of that kind gets a new one). Kept in memory only: after a reload
 *     the server's one-open-request rule is what stops a second call.
 *   - A call of a kind while one of that kind runs returns the same promise
 *     and sends nothing (a double tap calls once).
 *   - Retried like orders, with the same key: network failures, timeouts,
 *     5xx, 409 REQUEST_IN_PROGRESS, 429 other than PIN_LOCKED. A token
 *     refused 401 UNAUTHORIZED is traded in once (or ends the access:
 *     ACCESS_ENDED, when there is no PIN).
 *   - When the retries run out the last error is thrown (NETWORK_ERROR,
 *     TIMEOUT, ...) and the key stays, so tapping again is safe. Any other
 *     refusal (410 SESSION_CLOSED, 429 PIN_LOCKED, 400 ...) is thrown at once.
 *   - A kind other than SERVICE_KINDS ('call', 'bill') is refused with
 *     INVALID_KIND; nothing is sent.
 * The table's stream tells every phone at the table how requests go
 * (service.requested, service.acknowledged; data = the request).
 *
 * ── Other helpers ────────────────────────────────────────────────────────
 *
 *   getOrCreateClientId(storage, randomUUID) → persisted device id
 *     (localStorage key 'ordergate.clientId', "web-<uuid>").
 *   createMenuLoader({shopId, lang, baseUrl, fetch, ...}) → {load(), menu,
 *     etag, language, setLanguage(tag)}.
 *     load() resolves to {menu, changed} and sends If-None-Match. On a 304
 *     it gives the cached menu with changed: false. The menu is a fresh copy
 *     every time, so a page that applied events to its copy can take the
 *     server's state back even when nothing "changed". With a language the
 *     menu is asked for as `?lang=<tag>`; setLanguage(tag) switches it (the
 *     next load is a fresh 200, ETags differ per language).
 *   getShop({shopId, baseUrl, fetch}) → the shop (name, currency, timezone,
 *     languages once the server has them).
 *   getTable({code, baseUrl, fetch}) → what a permanent table card
 *     (/q/{code}) opens: {shopId, tableName, sessionId} (sessionId null
 *     while nobody is seated there). No auth; never answered from a cache
 *     (a page polls it to see the table open). Unknown card → NOT_FOUND.
 *   getWait({shopId, baseUrl, fetch}) → the kitchen's current pace:
 *     {estimatedMinutes (null: no estimate yet), sampleSize, windowMinutes}.
 *     No auth; the server lets caches keep it 30 s.
 *   subscribeSessionEvents({sessionId, pin, baseUrl, onEvent, onOpen,
 *     onStatus, EventSource, ...}) → {close(), lastEventId}. The guest stream
 *     with the PIN (`?pin=`), as v1 clients use it. onEvent(type, data, id)
 *     gets the parsed JSON data. onOpen({reconnected}) runs on every
 *     (re)connection, so the page can refresh.
 *     onStatus('live'|'reconnecting'|'offline'). EventSource reconnects by
 *     itself with Last-Event-ID. When it gives up (an HTTP error), the
 *     helper opens a new one with ?lastEventId= after a backoff.
 *   subscribeShopEvents({shopId, accessToken, ...}): the same for the staff
 *     stream (`?access_token=`).
 *
 * ── Live events ──────────────────────────────────────────────────────────
 *
 *   client.subscribeEvents({onEvent, onOpen, onStatus, onEnd, EventSource,
 *     ...}) → {close(), lastEventId}. The table's stream, as above, with the
 *     client's credential: `?access_token=<guest token>` (after the exchange,
 *     if none was made yet), or `?pin=` while the PIN is in use. Once the
 *     browser gives a stream up, the client reads the session (renewing a
 *     refused token) before it opens a new one. The stream stops for good,
 *     with onStatus('closed') and onEnd(error), after this table's
 *     session.closed event (error.code SESSION_CLOSED; the server ends the
 *     stream there too), or when the session reads as checked out
 *     (SESSION_CLOSED), unknown (NOT_FOUND) or the PIN is wrong
 *     (PIN_INVALID). A PIN lock or no answer only delays the next try.
 *   formatMoney(minor, currency, locale) → "$12.90" / "￥480" (minor units,
 *     the currency's own number of decimals; a locale Intl cannot use falls
 *     back to the browser's).
 *   canonicalCart(cart, {allowRepeat}) → the canonical form, as the server
 *     fingerprints a cart: lines of the same item, toppings, options and
 *     line note merged, toppings and options sorted and deduplicated, line
 *     notes trimmed (optionIds and note appear on a line only when it has
 *     them), lines sorted, note trimmed. canonicalOrderCart(order) gives the
 *     same form for a placed order (its lines' `options` and `note`).
 *   lineNoteProblem(note) → null, or why a line note cannot be sent:
 *     'too-long' (over MAX_LINE_NOTE_CHARS = 140), 'line-break', 'invisible'
 *     (control or formatting characters the server refuses).
 *   MAX_LINES (50), MAX_QUANTITY (99), MAX_NOTE_CHARS (200),
 *     MAX_LINE_NOTE_CHARS (140), MAX_OPTIONS (50 per line).
 */

const CLIENT_ID_STORAGE_KEY = 'ordergate.clientId';
const PENDING_KEY_PREFIX = 'ordergate.pendingKey.';
const GUEST_TOKEN_PREFIX = 'ordergate.guestToken.';
const CLIENT_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;
const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export const MAX_LINES = 50;
export const MAX_QUANTITY = 99;
export const MAX_NOTE_CHARS = 200;
/** A line's own note (`items[].note`): one line, at most this many characters. */
export const MAX_LINE_NOTE_CHARS = 140;
/** Options chosen on one line (`items[].optionIds`), at most. */
export const MAX_OPTIONS = 50;
export const GUEST_EVENT_TYPES = Object.freeze([
  'order.placed', 'order.updated', 'stock.changed', 'session.opened', 'session.closed',
  'menu.changed', 'service.requested', 'service.acknowledged',
]);
/** What a guest may ask staff for: come to the table, or bring the bill. */
export const SERVICE_KINDS = Object.freeze(['call', 'bill']);

/** Problem codes after which the same request is simply sent again. */
const RETRY_CODES = new Set(['REQUEST_IN_PROGRESS', 'SESSION_BUSY', 'COOLDOWN_ACTIVE', 'UNAVAILABLE', 'INTERNAL']);
/** Problem codes that are final even though their status looks transient. */
const FINAL_CODES = new Set(['CATALOG_NOT_READY', 'PIN_LOCKED', 'SESSION_RATE_LIMITED']);
/**
 * Refusals of the PIN-for-token exchange that the PIN itself would get too:
 * sending the PIN instead would only count one more wrong guess.
 */
const ACCESS_REFUSALS = new Set(['PIN_INVALID', 'PIN_LOCKED', 'SESSION_CLOSED']);
/** Answers after which a table's stream is not opened again. */
const STREAM_ENDINGS = new Set(['SESSION_CLOSED', 'PIN_INVALID', 'NOT_FOUND', 'ACCESS_ENDED']);

export class OrdergateError extends Error {
  /**
   * @param {string} code  stable machine-readable code
   * @param {string} message  human-readable text
   * @param {{status?: number, problem?: object|null, retryAfter?: number|null,
   *          cause?: unknown, checked?: boolean, reason?: string, line?: number}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'OrdergateError';
    this.code = code;
    this.status = extra.status ?? 0;
    this.problem = extra.problem ?? null;
    this.retryAfter = extra.retryAfter ?? null;
    if (Array.isArray(this.problem?.shortages)) this.shortages = this.problem.shortages;
    // VALIDATION_FAILED and INVALID_OPTIONS: [{field, message, groupId?}]
    if (Array.isArray(this.problem?.errors)) this.errors = this.problem.errors;
    if (extra.checked !== undefined) this.checked = extra.checked;
    // INVALID_CART: which limit, and the line (index) it concerns
    if (extra.reason !== undefined) this.reason = extra.reason;
    if (extra.line !== undefined) this.line = extra.line;
  }
}

// ── small utilities ─────────────────────────────────────────────────────

function memoryStorage() {
  const map = new Map();
  return {
    getItem: (k) => (map.has(k) ? map.get(k) : null),
    setItem: (k, v) => { map.set(k, String(v)); },
    removeItem: (k) => { map.delete(k); },
  };
}

/** localStorage if it works (it throws in some private modes), else memory. */
function defaultStorage() {
  try {
    const ls = globalThis.localStorage;
    if (ls) {
      const probe = '__ordergate_probe__';
      ls.setItem(probe, '1');
      ls.removeItem(probe);
      return ls;
    }
  } catch { /* fall through */ }
  return memoryStorage();
}

/**
 * sessionStorage if it works, else memory. Guest tokens live there: a
 * reload keeps the table open, but the credential goes with the tab instead
 * of staying on a phone the guest hands back or loses.
 */
function defaultTokenStorage() {
  try {
    const ss = globalThis.sessionStorage;
    if (ss) {
      const probe = '__ordergate_probe__';
      ss.setItem(probe, '1');
      ss.removeItem(probe);
      return ss;
    }
  } catch { /* fall through */ }
  return memoryStorage();
}

/** Storage calls that never throw (quota, private mode). */
function safeStorage(storage) {
  return {
    get(k) { try { return storage.getItem(k); } catch { return null; } },
    set(k, v) { try { storage.setItem(k, v); } catch { /* keep going in memory */ } },
    remove(k) { try { storage.removeItem(k); } catch { /* ignore */ } },
  };
}

/**
 * UUID v4. crypto.randomUUID exists only in secure contexts (https,
 * localhost). A restaurant LAN served over plain http on an IP address is
 * not one, so fall back to crypto.getRandomValues (available everywhere).
 */
/**
 * Compares two ISO 8601 times as instants (for sort). The server writes as
 * many fraction digits as a time needs ("…:38Z", "…:38.120Z"), so comparing
 * the strings would put a time on the exact second after later ones.
 */
export function compareInstants(a, b) {
  return Date.parse(a) - Date.parse(b);
}

export function uuidV4() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const b = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(b);
  else for (let i = 0; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function isValidClientId(id) {
  return typeof id === 'string' && CLIENT_ID_RE.test(id);
}

/** This device's client id: read from storage, or made once and stored. */
export function getOrCreateClientId(storage = defaultStorage(), randomUUID = uuidV4) {
  const s = safeStorage(storage);
  const existing = s.get(CLIENT_ID_STORAGE_KEY);
  if (isValidClientId(existing)) return existing;
  const id = `web-${randomUUID()}`;
  s.set(CLIENT_ID_STORAGE_KEY, id);
  return id;
}

function defaultSleep(ms) {
  return new Promise((resolve) => globalThis.setTimeout(resolve, ms));
}

/** Retry-After as seconds (delta-seconds or HTTP date), or null. */
export function parseRetryAfter(value, nowMs = Date.now()) {
  if (value == null || value === '') return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

function chars(text) {
  return [...text].length;
}

// ── canonical carts ─────────────────────────────────────────────────────

/** Ids as the server fingerprints them: strings, each once, sorted. */
function sortedIds(ids) {
  return [...new Set((ids ?? []).map(String))].sort();
}

/** A line's note as the server keeps it: trimmed; blank is no note. */
function lineNote(note) {
  return note == null ? '' : String(note).trim();
}

/**
 * The canonical form of one line, without its quantity: menuItemId and
 * toppingIds always; optionIds and note only when the line has them, so a
 * line without options or note reads exactly as it did before they existed
 * (and a key stored by an older page is still reused).
 */
function canonicalLine(line) {
  const out = { menuItemId: String(line?.menuItemId), toppingIds: sortedIds(line?.toppingIds) };
  const optionIds = sortedIds(line?.optionIds);
  if (optionIds.length) out.optionIds = optionIds;
  const note = lineNote(line?.note);
  if (note) out.note = note;
  return out;
}

/**
 * Where a line sorts: item, then toppings (as before options and notes
 * existed), then options and note, then the whole line as a tiebreak.
 */
function lineSortKey(line) {
  return [
    `${line.menuItemId}|${line.toppingIds.join(',')}`,
    (line.optionIds ?? []).join(','),
    line.note ?? '',
  ];
}

function compareLines(a, b) {
  const ka = lineSortKey(a);
  const kb = lineSortKey(b);
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
  }
  return 0;
}

/**
 * The canonical form of a cart: lines of the same item with the same
 * toppings, options and line note merged (quantities added), toppings and
 * options sorted and deduplicated, line notes trimmed, lines sorted, the
 * order note trimmed, allowRepeat a boolean. Two carts the server would
 * fingerprint alike have equal canonical forms; two steaks of different
 * doneness, or with different notes, are two lines.
 */
export function canonicalCart(cart, { allowRepeat = false } = {}) {
  const merged = new Map();
  for (const line of cart?.items ?? []) {
    const canonical = canonicalLine(line);
    const { menuItemId, toppingIds, optionIds, note } = canonical;
    const id = JSON.stringify([menuItemId, toppingIds, optionIds ?? [], note ?? '']);
    const prev = merged.get(id);
    const quantity = Number(line.quantity);
    if (prev) prev.quantity += quantity;
    else {
      const entry = { menuItemId, quantity, toppingIds };
      if (optionIds) entry.optionIds = optionIds;
      if (note) entry.note = note;
      merged.set(id, entry);
    }
  }
  const items = [...merged.values()].sort(compareLines);
  return { items, note: String(cart?.note ?? '').trim(), allowRepeat: Boolean(allowRepeat) };
}

/** The canonical form of a placed order's cart (for reconciliation). */
export function canonicalOrderCart(order) {
  return canonicalCart({
    items: (order?.items ?? []).map((l) => ({
      menuItemId: l.menuItemId,
      quantity: l.quantity,
      toppingIds: (l.toppings ?? []).map((t) => t.toppingId),
      optionIds: (l.options ?? []).map((o) => o.optionId),
      note: l.note ?? '',
    })),
    note: order?.note ?? '',
  });
}

function sameItems(a, b) {
  return JSON.stringify(a.items) === JSON.stringify(b.items) && a.note === b.note;
}

/** Line breaks, control and invisible formatting characters (refused in a line note). */
const LINE_NOTE_REFUSED_RE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Why a line note cannot be sent as it is ('too-long', 'line-break',
 * 'invisible'), or null when it can. Pages use it to say so before sending.
 */
export function lineNoteProblem(note) {
  const text = lineNote(note);
  if (chars(text) > MAX_LINE_NOTE_CHARS) return 'too-long';
  if (/[\r\n\u2028\u2029]/.test(text)) return 'line-break';
  if (LINE_NOTE_REFUSED_RE.test(text)) return 'invisible';
  return null;
}

/** Checks the limits the server would refuse anyway; returns the body to send. */
function requestBody(cart, allowRepeat) {
  const items = cart?.items;
  if (!Array.isArray(items) || items.length === 0) {
    throw new OrdergateError('INVALID_CART', 'The cart is empty.', { reason: 'empty' });
  }
  if (items.length > MAX_LINES) {
    throw new OrdergateError('INVALID_CART', `An order can have at most ${MAX_LINES} lines.`, { reason: 'lines' });
  }
  const lines = items.map((line, i) => {
    const quantity = Number(line?.quantity);
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) {
      throw new OrdergateError('INVALID_CART', `Line ${i + 1}: quantity must be 1–${MAX_QUANTITY}.`,
        { reason: 'quantity', line: i });
    }
    if (!line.menuItemId) throw new OrdergateError('INVALID_CART', `Line ${i + 1} has no menu item.`, { reason: 'item', line: i });
    const out = { menuItemId: String(line.menuItemId), quantity, toppingIds: (line.toppingIds ?? []).map(String) };
    if (line.optionIds != null) {
      if (!Array.isArray(line.optionIds)) {
        throw new OrdergateError('INVALID_CART', `Line ${i + 1}: optionIds must be a list.`, { reason: 'options', line: i });
      }
      const optionIds = line.optionIds.map(String);
      if (optionIds.length > MAX_OPTIONS) {
        throw new OrdergateError('INVALID_CART', `Line ${i + 1}: at most ${MAX_OPTIONS} options.`, { reason: 'options', line: i });
      }
      if (new Set(optionIds).size !== optionIds.length) {
        throw new OrdergateError('INVALID_CART', `Line ${i + 1}: an option is chosen twice.`, { reason: 'options', line: i });
      }
      if (optionIds.length) out.optionIds = optionIds;
    }
    if (line.note != null) {
      const problem = lineNoteProblem(line.note);
      if (problem === 'too-long') {
        throw new OrdergateError('INVALID_CART', `Line ${i + 1}: the note can be at most ${MAX_LINE_NOTE_CHARS} characters.`,
          { reason: 'line-note', line: i });
      }
      if (problem) {
        throw new OrdergateError('INVALID_CART', `Line ${i + 1}: the note must be one line of visible text.`,
          { reason: 'line-note', line: i });
      }
      const note = lineNote(line.note);
      if (note) out.note = note;
    }
    return out;
  });
  const note = String(cart.note ?? '').trim();
  if (chars(note) > MAX_NOTE_CHARS) {
    throw new OrdergateError('INVALID_CART', `The note can be at most ${MAX_NOTE_CHARS} characters.`, { reason: 'note' });
  }
  return { items: lines, note, allowRepeat: Boolean(allowRepeat) };
}

// ── HTTP ────────────────────────────────────────────────────────────────

function resolveDeps(o) {
  const fetchFn = o.fetch ?? ((...args) => globalThis.fetch(...args));
  return {
    fetch: fetchFn,
    setTimeout: o.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms)),
    clearTimeout: o.clearTimeout ?? ((t) => globalThis.clearTimeout(t)),
    now: o.now ?? (() => Date.now()),
    timeoutMs: o.timeoutMs ?? 10000,
  };
}

/**
 * One HTTP exchange with a timeout covering the body too. Resolves to
 * {status, headers, body} (body parsed as JSON when it is JSON, else text),
 * rejects with OrdergateError NETWORK_ERROR or TIMEOUT.
 */
async function exchange(deps, url, init = {}) {
  const controller = new AbortController();
  let timedOut = false;
  const timer = deps.setTimeout(() => { timedOut = true; controller.abort(); }, deps.timeoutMs);
  try {
    const res = await deps.fetch(url, { ...init, signal: controller.signal });
    const text = res.status === 204 || res.status === 304 ? '' : await res.text();
    let body = text;
    const type = res.headers.get('content-type') ?? '';
    if (text && /json/i.test(type)) {
      try { body = JSON.parse(text); } catch { body = text; }
    }
    return { status: res.status, headers: res.headers, body };
  } catch (err) {
    if (timedOut) {
      throw new OrdergateError('TIMEOUT', 'The restaurant did not answer in time.', { cause: err });
    }
    throw new OrdergateError('NETWORK_ERROR', 'Could not reach the restaurant.', { cause: err });
  } finally {
    deps.clearTimeout(timer);
  }
}

/** The typed error for a non-2xx answer. */
function problemError(answer, nowMs) {
  const problem = answer.body && typeof answer.body === 'object' ? answer.body : null;
  const code = typeof problem?.code === 'string' ? problem.code : `HTTP_${answer.status}`;
  const message = problem?.detail || problem?.title || `The server answered ${answer.status}.`;
  return new OrdergateError(code, message, {
    status: answer.status,
    problem,
    retryAfter: parseRetryAfter(answer.headers?.get?.('retry-after'), nowMs),
  });
}

async function getJson(deps, url, headers = {}) {
  const answer = await exchange(deps, url, { method: 'GET', headers: { Accept: 'application/json', ...headers } });
  if (answer.status >= 200 && answer.status < 300) return answer;
  throw problemError(answer, deps.now());
}

function trimBase(baseUrl) {
  return String(baseUrl ?? '').replace(/\/+$/, '');
}

// ── the order client ────────────────────────────────────────────────────

export function createOrderClient(options = {}) {
  const { sessionId } = options;
  const pin = options.pin ? String(options.pin) : null;
  if (!sessionId) throw new TypeError('createOrderClient: sessionId is required');
  const deps = resolveDeps(options);
  const base = trimBase(options.baseUrl);
  const storage = safeStorage(options.storage ?? defaultStorage());
  const randomUUID = options.randomUUID ?? uuidV4;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const onProgress = options.onProgress ?? (() => {});
  const onToken = options.onToken ?? (() => {});
  const maxAttempts = Math.max(1, options.maxAttempts ?? 6);
  const maxElapsedMs = options.maxElapsedMs ?? 30000;
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 8000;
  const reconcileLimit = options.reconcileLimit ?? 50;
  const reconcileWindowMs = options.reconcileWindowMs ?? 5 * 60 * 1000;
  const keyTtlMs = options.keyTtlMs ?? 23 * 60 * 60 * 1000;
  const exchangeRetryMs = options.exchangeRetryMs ?? 30000;
  const tokenStorage = safeStorage(options.tokenStorage ?? defaultTokenStorage());

  const clientId = options.clientId ?? getOrCreateClientId(
    { getItem: storage.get, setItem: storage.set, removeItem: storage.remove }, randomUUID);
  if (!isValidClientId(clientId)) throw new TypeError('createOrderClient: invalid clientId');

  const sessionPath = `${base}/api/v1/sessions/${encodeURIComponent(sessionId)}`;
  const pendingStorageKey = PENDING_KEY_PREFIX + sessionId;
  const pinHeader = pin ? { 'X-Session-PIN': pin } : null;
  const tokenStorageKey = GUEST_TOKEN_PREFIX + sessionId;

  /** This session's guest token, or null while the PIN is the credential. */
  let token = tokenStorage.get(tokenStorageKey) || null;
  /** No exchange is tried before this time (ms) after one that failed. */
  let nextExchangeAt = 0;
  /** The exchange under way: calls made meanwhile wait for it. */
  let exchanging = null;

  purgeExpiredKeys();
  /** {canonical, key, at} for the cart the guest is looking at. */
  let current = loadStoredKey();
  /** {canonical, promise} of the submit that is running. */
  let inflight = null;
  /** Orders this client already reported; reconciliation skips them. */
  const reported = new Set();

  /** Stored keys of other sessions past keyTtlMs (needs storage.key()). */
  function purgeExpiredKeys() {
    const raw = options.storage ?? null;
    const store = raw ?? (() => { try { return globalThis.localStorage; } catch { return null; } })();
    try {
      if (!store || typeof store.key !== 'function') return;
      for (let i = store.length - 1; i >= 0; i--) {
        const name = store.key(i);
        if (!name?.startsWith(PENDING_KEY_PREFIX) || name === pendingStorageKey) continue;
        let at = NaN;
        try { at = JSON.parse(store.getItem(name))?.at; } catch { /* damaged: drop */ }
        if (!(deps.now() - at < keyTtlMs)) store.removeItem(name);
      }
    } catch { /* storage blocked */ }
  }

  function loadStoredKey() {
    try {
      const raw = storage.get(pendingStorageKey);
      if (!raw) return null;
      const v = JSON.parse(raw);
      if (typeof v?.canonical === 'string' && UUID_V4_RE.test(v?.key ?? '')
          && typeof v.at === 'number' && deps.now() - v.at < keyTtlMs) {
        return { canonical: v.canonical, key: v.key, at: v.at };
      }
    } catch { /* a damaged entry is dropped */ }
    storage.remove(pendingStorageKey);
    return null;
  }

  function keyForCanonical(canonical) {
    if (!current || current.canonical !== canonical) {
      current = { canonical, key: randomUUID(), at: deps.now() };
      storage.set(pendingStorageKey, JSON.stringify(current));
    }
    return current.key;
  }

  function dropKey(key) {
    if (current && current.key === key) {
      current = null;
      storage.remove(pendingStorageKey);
    }
  }

  function retryDelay(attempt, retryAfterSec) {
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
    const jittered = Math.round(ceiling / 2 + random() * (ceiling / 2));
    return retryAfterSec == null ? jittered : Math.max(retryAfterSec * 1000, jittered);
  }

  /**
   * Forgets the token. With `refused` (the Authorization header a refused
   * call carried), only if it is still that one: a call running alongside
   * may have traded it in for a fresh one already.
   */
  function dropToken(refused) {
    if (refused !== undefined && refused !== `Bearer ${token}`) return;
    const had = token !== null;
    token = null;
    tokenStorage.remove(tokenStorageKey);
    if (had) onToken(false);
  }

  /** No PIN to fall back on, and no token (any more). */
  function accessEnded() {
    return new OrdergateError('ACCESS_ENDED',
      'This page has no access to the table any more. Scan the QR code on the table again.', { status: 401 });
  }

  /**
   * Trades the PIN for a guest token. A refusal the PIN would get as well
   * is thrown; any other failure (no answer, a 5xx, a server without the
   * exchange) leaves the PIN in use and the exchange due again later.
   */
  async function exchangeToken() {
    let answer;
    try {
      answer = await exchange(deps, `${sessionPath}/access`, {
        method: 'POST',
        headers: { Accept: 'application/json', ...pinHeader },
      });
    } catch {
      nextExchangeAt = deps.now() + exchangeRetryMs;
      return;
    }
    noteServerClock(answer);
    const granted = answer.status === 200 ? answer.body?.guestToken : null;
    if (typeof granted === 'string' && granted) {
      token = granted;
      tokenStorage.set(tokenStorageKey, granted);
      onToken(true);
      return;
    }
    const err = problemError(answer, deps.now());
    if (ACCESS_REFUSALS.has(err.code)) throw err;
    nextExchangeAt = deps.now() + exchangeRetryMs;
  }

  /**
   * The credential for the next guest call: the token, exchanged first if
   * there is none and an exchange is due, else the PIN. Never both: when
   * the PIN is sent, the server judges the PIN, lockouts included.
   */
  async function authHeaders() {
    if (!token && pin && deps.now() >= nextExchangeAt) {
      exchanging ??= exchangeToken().finally(() => { exchanging = null; });
      await exchanging;
    }
    if (token) return { Authorization: `Bearer ${token}` };
    if (pinHeader) return pinHeader;
    throw accessEnded();
  }

  /** A guest GET; a token the server no longer knows is traded in once. */
  async function guestGet(url) {
    const auth = await authHeaders();
    let answer;
    try {
      answer = await getJson(deps, url, auth);
    } catch (err) {
      if (!auth.Authorization) throw err;
      // Tokens die at checkout: a 410 leaves nothing worth keeping.
      if (err.code === 'SESSION_CLOSED') dropToken(auth.Authorization);
      if (err.code !== 'UNAUTHORIZED') throw err;
      dropToken(auth.Authorization);
      answer = await getJson(deps, url, await authHeaders());
    }
    noteServerClock(answer);
    return answer;
  }

  async function listOrders({ limit = 20 } = {}) {
    const answer = await guestGet(`${sessionPath}/orders?limit=${encodeURIComponent(limit)}`);
    return answer.body?.orders ?? [];
  }

  async function getSession() {
    return (await guestGet(sessionPath)).body;
  }

  /**
   * The credential of an order attempt. When the exchange finds the table
   * closed, the PIN still goes out: a key committed before checkout is
   * replayed to the PIN (within the server's grace), and a new order is
   * refused SESSION_CLOSED all the same.
   */
  async function orderAuth(pinOnly) {
    if (pinOnly) return pinHeader;
    try {
      return await authHeaders();
    } catch (err) {
      if (err.code === 'SESSION_CLOSED' && pinHeader) return pinHeader;
      throw err;
    }
  }

  function finish(outcome, order, attempts, key) {
    if (order?.orderId) reported.add(order.orderId);
    dropKey(key);
    return { outcome, alreadyPlaced: outcome === 'duplicate', order, attempts, idempotencyKey: key };
  }

  async function run(body, key, wanted) {
    const started = deps.now();
    // The key and the body are fixed for every attempt; only the credential
    // may change between them.
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'Idempotency-Key': key,
      'X-Client-Id': clientId,
    };
    const payload = JSON.stringify(body);
    let attempt = 0;
    let last = null;
    let renewed = false; // a token was refused UNAUTHORIZED and traded in
    let pinOnly = false; // a token was refused SESSION_CLOSED
    for (;;) {
      attempt += 1;
      onProgress({ phase: attempt === 1 ? 'sending' : 'retrying', attempt, idempotencyKey: key });
      const auth = await orderAuth(pinOnly);
      let answer = null;
      try {
        answer = await exchange(deps, `${sessionPath}/orders`, {
          method: 'POST', headers: { ...headers, ...auth }, body: payload,
        });
      } catch (err) {
        last = err; // NETWORK_ERROR or TIMEOUT: the outcome is unknown, retry
      }
      // A token refused before the key was looked at: send the same key
      // again at once with the other credential, once each.
      const refusal = auth.Authorization ? answer?.body?.code : null;
      if (refusal === 'UNAUTHORIZED' && !renewed) {
        renewed = true;
        dropToken(auth.Authorization);
        continue;
      }
      if (refusal === 'SESSION_CLOSED' && !pinOnly) {
        dropToken(auth.Authorization);
        // Without a PIN there is nothing to ask for the replay with.
        if (!pinHeader) throw problemError(answer, deps.now());
        pinOnly = true;
        continue;
      }
      if (answer) {
        noteServerClock(answer);
        if (answer.status >= 200 && answer.status < 300 && answer.body && typeof answer.body === 'object') {
          const replayed = answer.body.idempotentReplay === true
            || answer.headers.get('idempotent-replayed') === 'true';
          return finish(replayed ? 'replayed' : 'placed', answer.body, attempt, key);
        }
        const err = problemError(answer, deps.now());
        if (err.code === 'DUPLICATE_PAYLOAD' && err.problem?.originalOrder) {
          return finish('duplicate', err.problem.originalOrder, attempt, key);
        }
        const transient = RETRY_CODES.has(err.code)
          || (!FINAL_CODES.has(err.code)
            && (answer.status >= 500 || answer.status === 429 || answer.status === 408))
          // a 2xx whose body could not be read: the retry gets the replay
          || (answer.status >= 200 && answer.status < 300);
        if (!transient) {
          // A key the server holds for another cart can never work again.
          if (err.code === 'IDEMPOTENCY_KEY_REUSED') dropKey(key);
          throw err;
        }
        last = err;
      }
      if (attempt >= maxAttempts) break;
      const delayMs = retryDelay(attempt, last.retryAfter);
      if (deps.now() + delayMs - started >= maxElapsedMs) break;
      onProgress({ phase: 'waiting', attempt, delayMs, reason: last.code, idempotencyKey: key });
      await sleep(delayMs);
    }
    const keyMadeAt = current?.key === key ? Math.min(current.at, started) : started;
    return reconcile(wanted, key, keyMadeAt, attempt, last);
  }

  /**
   * Server time minus local time, learnt from the Date header of answers,
   * so reconciliation can compare createdAt with the first attempt even
   * when the phone's clock is off. Null until an answer had a Date.
   */
  let serverOffsetMs = null;
  function noteServerClock(answer) {
    const at = Date.parse(answer.headers?.get?.('date') ?? '');
    if (!Number.isNaN(at)) serverOffsetMs = at - deps.now();
  }

  async function reconcile(wanted, key, keyMadeAt, attempts, last) {
    onProgress({ phase: 'reconciling', attempt: attempts, idempotencyKey: key });
    let orders;
    try {
      orders = await listOrders({ limit: reconcileLimit });
    } catch (err) {
      throw new OrdergateError('NOT_CONFIRMED',
        'Your order could not be confirmed. Check your connection and tap again: it will not be placed twice.',
        { cause: last ?? err, checked: false, status: last?.status ?? 0, problem: last?.problem ?? null });
    }
    // The Date header has 1 s resolution, and the first attempt may have
    // been committed a little before its answer: allow a few seconds.
    const since = serverOffsetMs == null
      ? keyMadeAt - reconcileWindowMs
      : keyMadeAt + serverOffsetMs - 5000;
    const match = orders
      .filter((o) => o && o.clientId === clientId && !reported.has(o.orderId))
      .filter((o) => { const t = Date.parse(o.createdAt); return Number.isNaN(t) || t >= since; })
      .filter((o) => sameItems(canonicalOrderCart(o), wanted))
      .sort((a, b) => compareInstants(b.createdAt, a.createdAt))[0];
    if (match) return finish('reconciled', match, attempts, key);
    throw new OrdergateError('NOT_CONFIRMED',
      'Your order was not received yet. Check your connection and tap again: it will not be placed twice.',
      { cause: last, checked: true, status: last?.status ?? 0, problem: last?.problem ?? null });
  }

  function submit(cart, { allowRepeat = false } = {}) {
    let body;
    try {
      body = requestBody(cart, allowRepeat);
    } catch (err) {
      return Promise.reject(err);
    }
    const wanted = canonicalCart(cart, { allowRepeat });
    const canonical = JSON.stringify(wanted);
    if (inflight) {
      if (inflight.canonical === canonical) return inflight.promise;
      return Promise.reject(new OrdergateError('ORDER_PENDING',
        'Your previous order is still being sent. Wait a moment, then try again.'));
    }
    const key = keyForCanonical(canonical);
    const entry = { canonical, promise: null };
    inflight = entry;
    entry.promise = (async () => {
      try {
        await null; // `inflight` is set before anything below can finish
        return await run(body, key, wanted);
      } finally {
        if (inflight === entry) inflight = null;
      }
    })();
    return entry.promise;
  }

  /** kind → the callStaff promise running for it (a second tap joins it). */
  const serviceCalls = new Map();
  /** kind → the Idempotency-Key of the request of that kind not yet confirmed. */
  const serviceKeys = new Map();

  function callStaff(kind) {
    if (!SERVICE_KINDS.includes(kind)) {
      return Promise.reject(new OrdergateError('INVALID_KIND', `Unknown service request kind: ${kind}`));
    }
    const running = serviceCalls.get(kind);
    if (running) return running;
    let key = serviceKeys.get(kind);
    if (!key) {
      key = randomUUID();
      serviceKeys.set(kind, key);
    }
    const promise = (async () => {
      try {
        await null; // the map holds the promise before anything below can finish
        return await sendServiceRequest(kind, key);
      } finally {
        serviceCalls.delete(kind);
      }
    })();
    serviceCalls.set(kind, promise);
    return promise;
  }

  async function sendServiceRequest(kind, key) {
    const started = deps.now();
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json', 'Idempotency-Key': key };
    const payload = JSON.stringify({ kind });
    let attempt = 0;
    let last = null;
    let renewed = false;
    for (;;) {
      attempt += 1;
      const auth = await authHeaders();
      let answer = null;
      try {
        answer = await exchange(deps, `${sessionPath}/service-requests`, {
          method: 'POST', headers: { ...headers, ...auth }, body: payload,
        });
      } catch (err) {
        last = err; // no answer: the request may have been made, the key makes the retry safe
      }
      const refusal = auth.Authorization ? answer?.body?.code : null;
      if (refusal === 'UNAUTHORIZED' && !renewed) {
        renewed = true;
        dropToken(auth.Authorization);
        continue;
      }
      if (refusal === 'SESSION_CLOSED') dropToken(auth.Authorization);
      if (answer) {
        noteServerClock(answer);
        if (answer.status >= 200 && answer.status < 300 && answer.body && typeof answer.body === 'object') {
          if (serviceKeys.get(kind) === key) serviceKeys.delete(kind);
          const replayed = answer.headers.get('idempotent-replayed') === 'true';
          return {
            request: answer.body, alreadyOpen: answer.status === 200 && !replayed, replayed, attempts: attempt, idempotencyKey: key,
          };
        }
        const err = problemError(answer, deps.now());
        const transient = RETRY_CODES.has(err.code)
          || (!FINAL_CODES.has(err.code) && (answer.status >= 500 || answer.status === 429 || answer.status === 408))
          || (answer.status >= 200 && answer.status < 300);
        if (!transient) {
          if (err.code === 'IDEMPOTENCY_KEY_REUSED' && serviceKeys.get(kind) === key) serviceKeys.delete(kind);
          throw err;
        }
        last = err;
      }
      if (attempt >= maxAttempts) break;
      const delayMs = retryDelay(attempt, last.retryAfter);
      if (deps.now() + delayMs - started >= maxElapsedMs) break;
      await sleep(delayMs);
    }
    throw last;
  }

  /**
   * The table's stream with this client's credential. Once the browser
   * gives a stream up, the session is read through the client before a new
   * one opens: that renews a refused token, and tells a checked-out table
   * (410, or the session read as closed) from a network hiccup.
   */
  function subscribeEvents(subscribeOptions = {}) {
    const closedError = () => new OrdergateError('SESSION_CLOSED', 'This table has been checked out.', { status: 410 });
    return subscribe((lastEventId) => {
      const q = new URLSearchParams(token ? { access_token: token } : { pin: String(pin ?? '') });
      if (lastEventId != null) q.set('lastEventId', String(lastEventId));
      return `${sessionPath}/events?${q}`;
    }, subscribeOptions, {
      async access(again) {
        if (!again) {
          await authHeaders();
          return;
        }
        const session = await getSession();
        if (session?.status === 'closed') throw closedError();
      },
      final: (err) => STREAM_ENDINGS.has(err?.code),
      endsWith(type, data) {
        if (type !== 'session.closed' || data?.sessionId !== sessionId) return null;
        dropToken();
        return closedError();
      },
    });
  }

  return {
    clientId,
    sessionId,
    submit,
    getSession,
    listOrders,
    subscribeEvents,
    callStaff,
    get pending() { return inflight !== null; },
    get currentKey() { return current?.key ?? null; },
    get hasToken() { return token !== null; },
    get hasAccess() { return token !== null || pinHeader !== null; },
    keyFor(cart, { allowRepeat = false } = {}) {
      return keyForCanonical(JSON.stringify(canonicalCart(cart, { allowRepeat })));
    },
    pendingKeyFor(cart, { allowRepeat = false } = {}) {
      const canonical = JSON.stringify(canonicalCart(cart, { allowRepeat }));
      return current && current.canonical === canonical ? current.key : null;
    },
  };
}

// ── menu, shop ──────────────────────────────────────────────────────────

function copy(value) {
  return typeof structuredClone === 'function' ? structuredClone(value) : JSON.parse(JSON.stringify(value));
}

/**
 * Loads a shop's guest menu, revalidating with its ETag. Each load gives a
 * fresh copy of the menu as the server has it now (also after a 304), so a
 * page may change its copy (e.g. apply stock.changed events) and still get
 * the server's state back from the next load. With `lang` (a BCP 47 tag)
 * the menu is asked for in that language (`?lang=`); `setLanguage(tag)`
 * changes it, and the next load asks afresh (the ETag differs per language).
 */
export function createMenuLoader(options = {}) {
  const { shopId } = options;
  if (!shopId) throw new TypeError('createMenuLoader: shopId is required');
  const deps = resolveDeps(options);
  const base = `${trimBase(options.baseUrl)}/api/v1/shops/${encodeURIComponent(shopId)}/menu`;
  let lang = options.lang ? String(options.lang) : null;
  let etag = null;
  let menu = null;
  return {
    get menu() { return menu; },
    get etag() { return etag; },
    get language() { return lang; },
    setLanguage(tag) {
      const next = tag ? String(tag) : null;
      if (next === lang) return;
      lang = next;
      etag = null;
      menu = null;
    },
    async load() {
      const asked = lang;
      const url = asked ? `${base}?${new URLSearchParams({ lang: asked })}` : base;
      const headers = { Accept: 'application/json' };
      if (etag && menu) headers['If-None-Match'] = etag;
      const answer = await exchange(deps, url, { method: 'GET', headers });
      // The language changed while this load ran: ask again in the new one.
      if (asked !== lang) return this.load();
      if (answer.status === 304 && menu) return { menu: copy(menu), changed: false };
      if (answer.status !== 200 || !answer.body || typeof answer.body !== 'object') {
        throw problemError(answer, deps.now());
      }
      menu = answer.body;
      etag = answer.headers.get('etag');
      return { menu: copy(menu), changed: true };
    },
  };
}

export async function getShop(options = {}) {
  const deps = resolveDeps(options);
  const url = `${trimBase(options.baseUrl)}/api/v1/shops/${encodeURIComponent(options.shopId)}`;
  return (await getJson(deps, url)).body;
}

export async function getTable(options = {}) {
  if (!options.code) throw new TypeError('getTable: code is required');
  const deps = resolveDeps(options);
  const url = `${trimBase(options.baseUrl)}/api/v1/tables/${encodeURIComponent(options.code)}`;
  // Polled to see the table open: an answer kept by a cache would hide it.
  const answer = await exchange(deps, url, { method: 'GET', headers: { Accept: 'application/json' }, cache: 'no-store' });
  if (answer.status !== 200 || !answer.body || typeof answer.body !== 'object') throw problemError(answer, deps.now());
  return answer.body;
}

export async function getWait(options = {}) {
  if (!options.shopId) throw new TypeError('getWait: shopId is required');
  const deps = resolveDeps(options);
  const url = `${trimBase(options.baseUrl)}/api/v1/shops/${encodeURIComponent(options.shopId)}/wait`;
  return (await getJson(deps, url)).body;
}

// ── live events ─────────────────────────────────────────────────────────

/**
 * An EventSource that resumes after its last event. The hooks are for
 * streams whose credential can change or end:
 *   access(again)  runs before the first connection (again = false) and
 *                  before every new EventSource once the browser gave one up
 *                  (again = true); it may renew what makeUrl reads. Its
 *                  rejection delays the next try (at least its retryAfter),
 *                  or ends the stream when final(err) says so.
 *   endsWith(type, data)  a reason to end the stream after this event, or null.
 */
function subscribe(makeUrl, options, { access = null, final = () => false, endsWith = () => null } = {}) {
  const ES = options.EventSource ?? globalThis.EventSource;
  if (typeof ES !== 'function') throw new TypeError('EventSource is not available');
  const setT = options.setTimeout ?? ((fn, ms) => globalThis.setTimeout(fn, ms));
  const clearT = options.clearTimeout ?? ((t) => globalThis.clearTimeout(t));
  const random = options.random ?? Math.random;
  const types = options.types ?? GUEST_EVENT_TYPES;
  const onEvent = options.onEvent ?? (() => {});
  const onOpen = options.onOpen ?? (() => {});
  const onStatus = options.onStatus ?? (() => {});
  const onEnd = options.onEnd ?? (() => {});
  const baseMs = options.reconnectBaseMs ?? 1000;
  const maxMs = options.reconnectMaxMs ?? 30000;

  let source = null;
  let lastEventId = options.lastEventId ?? null;
  let opens = 0;
  let failures = 0;
  let timer = null;
  let closed = false;

  function backoff(retryAfterSec = null) {
    failures += 1;
    const ceiling = Math.min(maxMs, baseMs * 2 ** (failures - 1));
    const delay = Math.round(ceiling / 2 + random() * (ceiling / 2));
    timer = setT(start, retryAfterSec == null ? delay : Math.max(retryAfterSec * 1000, delay));
  }

  /** Stops for good: no EventSource is opened again. */
  function end(reason) {
    if (closed) return;
    closed = true;
    if (timer !== null) clearT(timer);
    source?.close();
    onStatus('closed');
    onEnd(reason);
  }

  let started = false;
  function start() {
    timer = null;
    if (closed) return;
    if (!access) {
      connect();
      return;
    }
    const again = started;
    started = true;
    access(again).then(() => connect(), (err) => {
      if (closed) return;
      if (final(err)) end(err);
      else backoff(err?.retryAfter ?? null);
    });
  }

  function connect() {
    if (closed) return;
    const es = new ES(makeUrl(lastEventId));
    source = es;
    es.addEventListener('open', () => {
      if (closed || es !== source) return;
      failures = 0;
      opens += 1;
      onStatus('live');
      onOpen({ reconnected: opens > 1 });
    });
    for (const type of types) {
      es.addEventListener(type, (ev) => {
        if (closed || es !== source) return;
        if (ev.lastEventId) lastEventId = ev.lastEventId;
        let data = ev.data;
        try { data = JSON.parse(ev.data); } catch { /* keep the text */ }
        onEvent(type, data, ev.lastEventId || null);
        const reason = endsWith(type, data);
        if (reason) end(reason);
      });
    }
    es.addEventListener('error', () => {
      if (closed || es !== source) return;
      if (es.readyState === 2) {
        // EventSource gave up (an HTTP error or a wrong content type): open
        // a new one ourselves, resuming after the last event we saw.
        es.close();
        onStatus('offline');
        backoff();
      } else {
        onStatus('reconnecting');
      }
    });
  }

  start();
  return {
    get lastEventId() { return lastEventId; },
    close() {
      closed = true;
      if (timer !== null) clearT(timer);
      source?.close();
    },
  };
}

/** The guest stream of one table: its orders and the shop's stock. */
export function subscribeSessionEvents(options = {}) {
  const { sessionId, pin } = options;
  const base = trimBase(options.baseUrl);
  return subscribe((lastEventId) => {
    const q = new URLSearchParams({ pin: String(pin) });
    if (lastEventId != null) q.set('lastEventId', String(lastEventId));
    return `${base}/api/v1/sessions/${encodeURIComponent(sessionId)}/events?${q}`;
  }, options);
}

/** The staff stream of a whole shop (the token goes in ?access_token=). */
export function subscribeShopEvents(options = {}) {
  const { shopId, accessToken } = options;
  const base = trimBase(options.baseUrl);
  return subscribe((lastEventId) => {
    const q = new URLSearchParams();
    if (accessToken) q.set('access_token', String(accessToken));
    if (lastEventId != null) q.set('lastEventId', String(lastEventId));
    return `${base}/api/v1/shops/${encodeURIComponent(shopId)}/events?${q}`;
  }, options);
}

// ── money ───────────────────────────────────────────────────────────────

const formatters = new Map();

function moneyFormatter(currency, locale) {
  const id = `${locale ?? ''}|${currency}`;
  let nf = formatters.get(id);
  if (!nf) {
    try {
      nf = new Intl.NumberFormat(locale, { style: 'currency', currency });
    } catch (err) {
      // A tag Intl cannot use (e.g. a shop's made-up language): the
      // browser's own locale, still in the shop's currency.
      if (!(err instanceof RangeError) || locale == null) throw err;
      nf = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    }
    formatters.set(id, nf);
  }
  return nf;
}

/**
 * Formats an amount in minor units: formatMoney(1290, 'USD') → "$12.90",
 * formatMoney(2100, 'JPY', 'ja') → "￥2,100". The currency decides the
 * number of decimals (JPY none, USD two, KWD three), the locale the look.
 */
export function formatMoney(minor, currency, locale) {
  const nf = moneyFormatter(currency, locale);
  const digits = nf.resolvedOptions().maximumFractionDigits;
  return nf.format(Number(minor) / 10 ** digits);
}
