// Shared code of the two staff pages (kitchen display and staff console):
// signing in (a username and password, or a token: the administrator's or a
// device's; see withStaffSignIn), what the credential may do in this shop
// (GET /auth/me), calls to the API with
// problem+json errors, idempotency keys per intended change, the shop's live
// event stream with its connection indicator, small formatting helpers, what
// a device remembers (localStorage), the chime (Chime) and the tables
// calling (ServiceRequests).
//
// Times are the shop's: loadShop() makes the shop's `timezone` (IANA) the
// zone of formatTime and formatDateTime (and says so with an
// 'ordergate:timezone' event on window), whatever the device's clock is
// set to, as on the guest page. A datetime-local input is read and written
// as the shop's wall clock with toZonedInputValue / fromZonedInputValue.
// These helpers touch no browser global, so Node can test them.
//
// Test hooks shared by both pages (see kitchen.js and staff.js for the rest):
//   #sign-in               the sign-in section (shown while signed out; the
//                          forms are drawn into it, from its data-help and
//                          data-open), with
//                          #sign-in-message (role=alert: why it is shown, such
//                          as "this display was signed out")
//   #login-form            username and password: #username-input,
//                          #password-input, #login-error (LOGIN_FAILED, LOGIN_LOCKED)
//   #token-form            a token instead (the administrator's, or a device's):
//                          #token-input, #token-error
//   #app                   the page body proper (hidden until a credential works)
//   #signed-in-as          who is signed in ("rin · floor", "Pass display ·
//                          kitchen", "administrator"): data-kind (admin |
//                          account | device), data-role
//   #sign-out              signs out (the token is revoked) and shows the form
//   A page opened as …#device=<token> (the QR code the console shows for a
//   new device) signs in with that device token, keeps it in localStorage
//   (a display stays signed in across restarts) and drops it from the URL.
//   #shop-name             the shop's name once loaded
//   #connection            live-stream indicator (hidden while signed out);
//                          data-state is one of
//                          connecting | live | reconnecting | offline
//                          (mirrored on body[data-connection] for styling)
//   #announcer             polite aria-live region (status changes are read out)
//   #problem               role=alert region showing the last API problem's detail
//                          (data-code is its `code`); #problem-dismiss clears it
//   button#sound-toggle    the chime's mute toggle (Chime below): aria-pressed=
//                          "true" when muted (remembered on the device), with
//                          data-audio = running | suspended | unavailable,
//                          data-chimes (chimes played) and data-chimes-muted
//                          (chimes asked for while muted); each counts requests,
//                          also when the browser's audio is blocked. Chimes
//                          asked for within 700 ms of the last one are played
//                          once and counted once. #sound-hint asks for a tap
//                          while the browser keeps the audio suspended.

import { compareInstants } from './order-sdk.js';

const TOKEN_KEY = 'ordergate.staffToken';
// A device's token outlives the tab: a kitchen display is switched off and on.
const DEVICE_KEY = 'ordergate.deviceToken';
const DEVICE_PREFIX = 'og_device_';

/** The shop id from `/kitchen/{shopId}` or `/staff/{shopId}`. */
export function shopIdFromPath() {
  const parts = location.pathname.split('/').filter(Boolean);
  return decodeURIComponent(parts[1] || '');
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(DEVICE_KEY) || '';
  } catch {
    return '';
  }
}

function setToken(token) {
  clearToken();
  try {
    if (token.startsWith(DEVICE_PREFIX)) localStorage.setItem(DEVICE_KEY, token);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage refused (private mode quota): the token lives in memory only.
  }
  memoryToken = token;
}

export function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(DEVICE_KEY);
  } catch {
    // nothing to clear
  }
  memoryToken = '';
}

let memoryToken = '';
function currentToken() {
  return getToken() || memoryToken;
}

/** A UUID version 4 (works on plain-http origins too, unlike randomUUID). */
export function uuidv4() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * One idempotency key per intended change. The intent names the change
 * (for example `order:<id>:v3:accepted`), so a retry of the same change
 * reuses its key and a new change gets a new one. Forget a key once the
 * change has a definite answer.
 */
export class IntentKeys {
  constructor() {
    this.keys = new Map();
  }
  get(intent) {
    let key = this.keys.get(intent);
    if (!key) {
      key = uuidv4();
      this.keys.set(intent, key);
    }
    return key;
  }
  has(intent) {
    return this.keys.has(intent);
  }
  forget(intent) {
    this.keys.delete(intent);
  }
}

/** An API refusal (problem+json) or a failure to reach the server. */
export class ApiProblem extends Error {
  constructor(status, body) {
    const detail = (body && (body.detail || body.title)) || `HTTP ${status}`;
    super(detail);
    this.status = status;
    this.code = (body && body.code) || (status === 0 ? 'NETWORK' : `HTTP_${status}`);
    this.detail = detail;
    this.body = body || {};
  }
  /** Worth sending again with the same idempotency key. */
  get retryable() {
    return (
      this.status === 0 || this.status >= 500 || this.code === 'REQUEST_IN_PROGRESS' || this.code === 'SESSION_BUSY'
    );
  }
  /** The detail, with field errors of a VALIDATION_FAILED appended. */
  get fullText() {
    const errors = Array.isArray(this.body.errors) ? this.body.errors : [];
    if (!errors.length) return this.detail;
    return `${this.detail}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`;
  }
}

/** The text to show for any error thrown by `api`. */
export function problemText(err) {
  if (err instanceof ApiProblem) return err.fullText;
  return String((err && err.message) || err);
}

let onUnauthorized = () => {};

/** Server time minus client time, in ms (from the Date header; 0 if close). */
let clockSkew = 0;
export function serverNow() {
  return Date.now() + clockSkew;
}

/**
 * Call the API as staff. Resolves to the parsed JSON body; rejects with an
 * ApiProblem. `key` sets the Idempotency-Key; `retries` sends the same
 * request again (same key) after network errors, 5xx and in-progress answers.
 */
export async function api(path, options = {}) {
  return (await apiResponse(path, options)).data;
}

/**
 * Like `api`, but resolves to {data, status, etag, headers}. Besides `api`'s
 * options: `headers` adds request headers (e.g. If-Match), and `rawBody`
 * (an ArrayBuffer, Blob or typed array) is sent as it is with `contentType`
 * in place of a JSON `body`.
 */
export async function apiResponse(
  path,
  { method = 'GET', body, rawBody, contentType, headers: extra = {}, key, retries = 0, auth = true } = {},
) {
  const headers = { Accept: 'application/json', ...extra };
  if (auth) headers.Authorization = `Bearer ${currentToken()}`;
  if (rawBody !== undefined) headers['Content-Type'] = contentType || 'application/octet-stream';
  else if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (key) headers['Idempotency-Key'] = key;
  const payload = rawBody !== undefined ? rawBody : body === undefined ? undefined : JSON.stringify(body);
  for (let attempt = 0; ; attempt += 1) {
    let problem;
    try {
      const res = await fetch(path, {
        method,
        headers,
        body: payload,
        cache: 'no-store',
      });
      noteServerDate(res);
      const text = await res.text();
      let data = null;
      if (text) {
        try {
          data = JSON.parse(text);
        } catch {
          data = null;
        }
      }
      if (res.ok) return { data, status: res.status, etag: res.headers.get('ETag'), headers: res.headers };
      problem = new ApiProblem(res.status, data);
      if (res.status === 401 && auth) {
        onUnauthorized(problem);
        throw problem;
      }
    } catch (err) {
      if (err instanceof ApiProblem) {
        if (err.status === 401) throw err;
        problem = err;
      } else {
        problem = new ApiProblem(0, {
          code: 'NETWORK',
          detail: 'Could not reach the server. Check the connection and try again.',
        });
      }
    }
    if (!problem.retryable || attempt >= retries) throw problem;
    await sleep(500 * 2 ** attempt);
  }
}

function noteServerDate(res) {
  const date = Date.parse(res.headers.get('Date') || '');
  if (Number.isNaN(date)) return;
  const skew = date - Date.now();
  // The header has one-second resolution: only correct a clock that is off.
  clockSkew = Math.abs(skew) > 5000 ? skew : 0;
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Put a short message in the polite live region (read out by screen readers). */
export function announce(text) {
  const el = document.getElementById('announcer');
  if (!el) return;
  // Clear first so that the same message twice is read twice.
  el.textContent = '';
  setTimeout(() => {
    el.textContent = text;
  }, 50);
}

/**
 * Show (or, with null, clear) the page-wide problem message. `source` names
 * what failed (say, a list that did not load), so that its next success
 * clears it with `clearProblem(source)`.
 */
export function showProblem(err, source = '') {
  const el = document.getElementById('problem');
  const dismiss = document.getElementById('problem-dismiss');
  if (!el) return;
  if (err) {
    el.textContent = typeof err === 'string' ? err : problemText(err);
    el.dataset.code = err instanceof ApiProblem ? err.code : 'ERROR';
    el.dataset.source = source;
  } else {
    el.textContent = '';
    delete el.dataset.code;
    delete el.dataset.source;
  }
  if (dismiss) dismiss.hidden = !err;
}

/** Clear the problem message if `source` put it there. */
export function clearProblem(source) {
  const el = document.getElementById('problem');
  if (el && el.textContent && el.dataset.source === source) showProblem(null);
}

/** Every duty, for the administrator (who may do everything). */
const ALL_DUTIES = [
  'settings',
  'staff',
  'devices',
  'catalog',
  'inventory',
  'tables',
  'sessions',
  'kitchen',
  'service',
  'printers',
  'audit',
];

/**
 * What a `GET /auth/me` answer may do in `shopId`: {kind, role, name, may}
 * (`may` a Set of duties), or null when it has no role there. Without a
 * shop (the start page), any credential will do: it has no role, and may
 * only what it may everywhere.
 */
export function rightsIn(me, shopId) {
  if (me.kind === 'admin') return { kind: 'admin', role: null, name: 'administrator', may: new Set(ALL_DUTIES) };
  const name = me.kind === 'device' ? me.device.name : me.account.username;
  if (shopId === null) return { kind: me.kind, role: null, name, may: new Set() };
  const shop = (me.shops || []).find((s) => s.shopId === shopId);
  if (!shop) return null;
  return { kind: me.kind, role: shop.role, name, may: new Set(shop.may) };
}

/**
 * The sign-in forms, one piece for every staff page: an account's form and
 * a token's, into the page's empty `#sign-in` section. The section says
 * what differs: `data-help` (the account form's hint) and `data-open` (the
 * token form's button).
 */
function renderSignIn(section) {
  const field = (id, label, attrs) => [h('label', { for: id }, label), h('input', { id, required: true, ...attrs })];
  const error = (id) => h('p', { id, class: 'field-error', role: 'alert', hidden: true });
  section.replaceChildren(
    h('h2', { id: 'sign-in-title' }, 'Staff sign-in'),
    h('p', { id: 'sign-in-message', class: 'sign-in-message', role: 'alert', hidden: true }),
    h(
      'form',
      { id: 'login-form', class: 'token-form card', novalidate: true },
      h('h3', {}, 'Your account'),
      h('p', { id: 'login-help', class: 'hint' }, section.dataset.help || ''),
      ...field('username-input', 'Username', {
        name: 'username',
        autocomplete: 'username',
        autocapitalize: 'none',
        spellcheck: 'false',
        'aria-describedby': 'login-help login-error',
      }),
      ...field('password-input', 'Password', {
        name: 'password',
        type: 'password',
        autocomplete: 'current-password',
        'aria-describedby': 'login-error',
      }),
      error('login-error'),
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in'),
    ),
    h(
      'form',
      { id: 'token-form', class: 'token-form card', novalidate: true },
      h('h3', {}, 'Or a token'),
      h(
        'p',
        { id: 'token-help', class: 'hint' },
        'A device token (a manager makes one under Staff & devices, with a QR code to scan) or the platform ' +
          "administrator's token.",
      ),
      ...field('token-input', 'Token', {
        name: 'token',
        type: 'password',
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': 'token-help token-error',
      }),
      error('token-error'),
      h('button', { type: 'submit', class: 'btn' }, section.dataset.open || 'Sign in with the token'),
    ),
  );
}

/** A device token from the URL's `#device=…`, taken out of the URL. */
function tokenFromLink() {
  const match = /(?:^#|&)device=([^&]+)/.exec(location.hash);
  if (!match) return '';
  history.replaceState(null, '', location.pathname + location.search);
  return decodeURIComponent(match[1]);
}

/**
 * Sign in once (unless this tab or device is signed in): a username and
 * password, or a token. The credential must have a role in `shopId`;
 * `start(rights, me)` is then called with what it may do there (see
 * rightsIn) and the `GET /auth/me` answer it was judged from. A 401 later
 * shows the sign-in again with the server's word.
 */
export function withStaffSignIn({ shopId, start, stop }) {
  const section = document.getElementById('sign-in');
  renderSignIn(section);
  const message = document.getElementById('sign-in-message');
  const login = document.getElementById('login-form');
  const tokenForm = document.getElementById('token-form');
  const tokenInput = document.getElementById('token-input');
  const tokenError = document.getElementById('token-error');
  const loginError = document.getElementById('login-error');
  const app = document.getElementById('app');
  const signOut = document.getElementById('sign-out');
  const signedInAs = document.getElementById('signed-in-as');
  const connection = document.getElementById('connection');
  let running = false;
  let rights = null;

  function say(el, text) {
    el.textContent = text || '';
    el.hidden = !text;
  }

  function showForm(why) {
    if (running) {
      running = false;
      stop();
    }
    rights = null;
    app.hidden = true;
    section.hidden = false;
    signOut.hidden = true;
    signedInAs.hidden = true;
    if (connection) connection.hidden = true;
    say(message, why);
    document.getElementById('username-input').focus();
  }

  async function tryToken(errorEl) {
    const buttons = section.querySelectorAll('button[type=submit]');
    for (const b of buttons) b.disabled = true;
    try {
      const me = await api('/api/v1/auth/me');
      rights = rightsIn(me, shopId);
      if (!rights) {
        clearToken();
        showForm('');
        say(errorEl, 'Signed in, but with no role in this shop. Ask its owner to add you.');
        return;
      }
      showProblem(null);
      section.hidden = true;
      app.hidden = false;
      signOut.hidden = false;
      signedInAs.hidden = false;
      signedInAs.textContent = rights.role ? `${rights.name} · ${rights.role}` : rights.name;
      signedInAs.dataset.kind = rights.kind;
      signedInAs.dataset.role = rights.role || '';
      if (connection) connection.hidden = false;
      say(loginError, '');
      say(tokenError, '');
      running = true;
      await start(rights, me);
    } catch (err) {
      if (err instanceof ApiProblem && err.status === 401) return; // form shown
      if (!running) {
        showForm('');
        say(errorEl, problemText(err));
      } else showProblem(err);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  onUnauthorized = (problem) => {
    const device = currentToken().startsWith(DEVICE_PREFIX);
    clearToken();
    const why = device
      ? `This device was signed out (${problem.detail || 'its token was refused'}). Ask a manager for a new device link.`
      : problem.detail || 'The credential was refused.';
    showForm(why);
  };

  const dismiss = document.getElementById('problem-dismiss');
  if (dismiss) dismiss.addEventListener('click', () => showProblem(null));

  login.addEventListener('submit', async (event) => {
    event.preventDefault();
    const username = document.getElementById('username-input').value.trim();
    const password = document.getElementById('password-input');
    if (!username || !password.value) {
      say(loginError, 'Enter your username and password.');
      return;
    }
    say(message, '');
    try {
      const signedIn = await api('/api/v1/auth/login', {
        method: 'POST',
        body: { username, password: password.value },
        auth: false,
      });
      password.value = '';
      setToken(signedIn.token);
      await tryToken(loginError);
    } catch (err) {
      say(loginError, problemText(err));
    }
  });

  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = tokenInput.value.trim();
    if (!token) {
      say(tokenError, 'Enter the token.');
      return;
    }
    say(message, '');
    setToken(token);
    tokenInput.value = '';
    tryToken(tokenError);
  });

  signOut.addEventListener('click', async () => {
    const wasAdmin = rights && rights.kind === 'admin';
    // The administrator's token is configuration: it is only forgotten here.
    if (!wasAdmin) await api('/api/v1/auth/logout', { method: 'POST' }).catch(() => {});
    clearToken();
    showForm('');
    announce('Signed out.');
  });

  const linked = tokenFromLink();
  if (linked) setToken(linked);
  if (currentToken()) tryToken(tokenError);
  else showForm('');
}

/**
 * The shop (no auth: guests read it too): name, currency and timezone (which
 * the times shown then follow), and the kitchen's age thresholds. Read again
 * on every menu.changed, so a blip is retried rather than shown.
 */
export async function loadShop(shopId) {
  const shop = await api(`/api/v1/shops/${encodeURIComponent(shopId)}`, { auth: false, retries: 2 });
  const name = document.getElementById('shop-name');
  if (name) name.textContent = shop.name;
  document.title = `${shop.name} · ${document.title.split(' · ').pop()}`;
  setShopTimeZone(shop.timezone);
  return shop;
}

/** Format minor units of `currency` (480 → "$4.80", or "¥480" for JPY). */
export function moneyFormatter(currency) {
  let fmt;
  try {
    fmt = new Intl.NumberFormat(undefined, { style: 'currency', currency });
  } catch {
    fmt = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2 });
  }
  const digits = fmt.resolvedOptions().maximumFractionDigits;
  return (minor) => fmt.format(minor / 10 ** digits);
}

// ── times, in the shop's zone ──────────────────────────────────────────

/** The shop's IANA zone once loadShop() read it; null (the device's zone) before. */
let shopZone = null;

/** Whether Intl knows `zone` as a time zone. */
export function isTimeZone(zone) {
  if (typeof zone !== 'string' || !zone) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `zone` the zone of every time the page shows (an unknown one is
 * ignored: the device's zone then). Tells the page with an
 * 'ordergate:timezone' event on window, so what was drawn before is drawn
 * again.
 */
export function setShopTimeZone(zone) {
  const next = isTimeZone(zone) ? zone : null;
  if (next === shopZone) return;
  shopZone = next;
  if (typeof window !== 'undefined' && typeof window.dispatchEvent === 'function') {
    window.dispatchEvent(new CustomEvent('ordergate:timezone', { detail: { timeZone: next } }));
  }
}

/** The zone times are shown in: the shop's, or the device's while it is unknown. */
export function shopTimeZone() {
  return shopZone ?? new Intl.DateTimeFormat().resolvedOptions().timeZone;
}

const formats = new Map();
function formatIn(kind, zone, locale) {
  const id = `${kind}|${zone ?? ''}|${locale ?? ''}`;
  let fmt = formats.get(id);
  if (!fmt) {
    const options =
      kind === 'time'
        ? { hour: '2-digit', minute: '2-digit' }
        : kind === 'dateTime'
          ? { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }
          : { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' };
    fmt = new Intl.DateTimeFormat(kind === 'parts' ? 'en-US' : locale, { ...options, timeZone: zone ?? undefined });
    formats.set(id, fmt);
  }
  return fmt;
}

/**
 * The wall clock of instant `ms` in `zone`: {year, month, day, hour,
 * minute, second} (month 1–12, hour 0–23).
 */
export function zonedParts(ms, zone = shopZone) {
  const parts = {};
  for (const p of formatIn('parts', zone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour % 24,
    minute: parts.minute,
    second: parts.second,
  };
}

/** How far `zone`'s wall clock is ahead of UTC at instant `ms`, in ms (Auckland in January: +13 h). */
export function zoneOffsetMs(ms, zone = shopZone) {
  const p = zonedParts(ms, zone);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - (Math.floor(ms / 1000) * 1000);
}

/** "14:05" / "02:05 PM" in the shop's zone (the device's locale). */
export function formatTime(iso, { zone = shopZone, locale } = {}) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return formatIn('time', zone, locale).format(d);
}

/** The time alone on the shop's today, else with the date ("Dec 1, 14:05"), in the shop's zone. */
export function formatDateTime(iso, { zone = shopZone, locale, now = serverNow() } = {}) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const day = (ms) => {
    const p = zonedParts(ms, zone);
    return `${p.year}-${p.month}-${p.day}`;
  };
  return day(d.getTime()) === day(now) ? formatIn('time', zone, locale).format(d) : formatIn('dateTime', zone, locale).format(d);
}

/** `YYYY-MM-DDTHH:MM`: instant `ms` on `zone`'s wall clock, for a datetime-local input. */
export function toZonedInputValue(ms, zone = shopZone) {
  const p = zonedParts(typeof ms === 'number' ? ms : new Date(ms).getTime(), zone);
  const two = (n) => String(n).padStart(2, '0');
  return `${String(p.year).padStart(4, '0')}-${two(p.month)}-${two(p.day)}T${two(p.hour)}:${two(p.minute)}`;
}

/**
 * The instant (ms) a datetime-local value (`YYYY-MM-DDTHH:MM`, seconds
 * optional) means on `zone`'s wall clock; NaN if it is no such value. A
 * time the clocks skip (spring forward) is read as after the change (02:30
 * on a night that jumps from 02:00 to 03:00 is 03:30), a time they pass
 * twice (fall back) as the first one, as browsers read local times.
 */
export function fromZonedInputValue(value, zone = shopZone) {
  const m = /^(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(String(value ?? '').trim());
  if (!m) return NaN;
  const [year, month, day, hour, minute, second = 0] = m.slice(1).map((x) => Number(x ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return NaN;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(wall).getUTCDate() !== day) return NaN; // 31 April
  const DAY = 24 * 60 * 60 * 1000;
  // The zone's offsets a day either side cover any one change of the clocks.
  const offsets = [...new Set([zoneOffsetMs(wall - DAY, zone), zoneOffsetMs(wall, zone), zoneOffsetMs(wall + DAY, zone)])];
  const fits = offsets.map((o) => wall - o).filter((t) => zoneOffsetMs(t, zone) === wall - t).sort((a, b) => a - b);
  if (fits.length) return fits[0];
  // Skipped: read with the offset in force before the change.
  return wall - zoneOffsetMs(wall - DAY, zone);
}

/** "just now", "4 min", "1 h 12 min". */
export function formatAge(iso, now = serverNow()) {
  const secs = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (secs < 45) return 'just now';
  const mins = Math.round(secs / 60);
  if (mins < 60) return `${mins} min`;
  return `${Math.floor(mins / 60)} h ${mins % 60} min`;
}

/** `document.createElement` with attributes, dataset and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const LONG_OUTAGE_MS = 30_000;
const OFFLINE_AFTER_MS = 15_000;

/**
 * The shop's event stream. EventSource reconnects by itself and sends
 * Last-Event-ID, so the server resumes exactly after the last event seen.
 * If the browser gives up (the stream closed, e.g. the server refused it),
 * a new EventSource resumes with `?lastEventId=`. `resync` runs on the
 * first open, and again after a long outage or a new EventSource, so the
 * page can re-read its lists.
 */
export class LiveStream {
  constructor({ shopId, events, resync, probe }) {
    this.shopId = shopId;
    this.events = events;
    this.resync = resync;
    // What shows whether the credential still works: any credential may ask.
    this.probe = probe || '/api/v1/auth/me';
    this.es = null;
    this.lastEventId = null;
    this.state = 'connecting';
    this.downSince = null;
    this.needResync = true;
    this.retryTimer = null;
    this.offlineTimer = null;
    this.backoff = 1000;
    this.stopped = true;
    this.onOnline = () => {
      if (!this.stopped && (!this.es || this.es.readyState === EventSource.CLOSED)) this.open();
    };
    this.onOffline = () => {
      if (!this.stopped) this.setState('offline');
    };
  }

  start() {
    this.stopped = false;
    this.needResync = true;
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
    this.open();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
    clearTimeout(this.retryTimer);
    clearTimeout(this.offlineTimer);
    this.offlineTimer = null;
    if (this.es) this.es.close();
    this.es = null;
    this.setState('offline');
  }

  url() {
    const q = new URLSearchParams({ access_token: currentToken() });
    if (this.lastEventId !== null) q.set('lastEventId', this.lastEventId);
    return `/api/v1/shops/${encodeURIComponent(this.shopId)}/events?${q}`;
  }

  open() {
    clearTimeout(this.retryTimer);
    if (this.es) this.es.close();
    if (this.state !== 'live') this.setState(this.downSince ? 'reconnecting' : 'connecting');
    const es = new EventSource(this.url());
    this.es = es;
    es.addEventListener('open', () => {
      if (es !== this.es) return;
      clearTimeout(this.offlineTimer);
      this.offlineTimer = null;
      const outage = this.downSince ? Date.now() - this.downSince : 0;
      this.downSince = null;
      this.backoff = 1000;
      this.setState('live');
      if (this.needResync || outage > LONG_OUTAGE_MS) {
        this.needResync = false;
        this.resync();
      }
    });
    es.addEventListener('error', () => {
      if (es !== this.es || this.stopped) return;
      if (!this.downSince) this.downSince = Date.now();
      if (es.readyState === EventSource.CLOSED) {
        this.setState('offline');
        this.reopenLater();
      } else {
        // Every failed attempt fires an error: count from the first one.
        if (this.state !== 'offline') this.setState(navigator.onLine === false ? 'offline' : 'reconnecting');
        if (!this.offlineTimer) {
          this.offlineTimer = setTimeout(() => {
            this.offlineTimer = null;
            if (this.es === es && es.readyState !== EventSource.OPEN) this.setState('offline');
          }, OFFLINE_AFTER_MS);
        }
      }
    });
    for (const [type, handler] of Object.entries(this.events)) {
      es.addEventListener(type, (event) => {
        if (es !== this.es) return;
        if (event.lastEventId) this.lastEventId = event.lastEventId;
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        handler(data, event);
      });
    }
  }

  /** The browser closed the stream: check the token, then open a new one. */
  reopenLater() {
    if (this.es) this.es.close();
    clearTimeout(this.retryTimer);
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, 30_000);
    this.retryTimer = setTimeout(async () => {
      if (this.stopped) return;
      try {
        await api(this.probe);
      } catch (err) {
        if (err instanceof ApiProblem && err.status === 401) return; // token form shown
        this.reopenLater();
        return;
      }
      this.needResync = true;
      this.open();
    }, delay);
  }

  setState(state) {
    this.state = state;
    const el = document.getElementById('connection');
    if (!el) return;
    const labels = {
      connecting: 'Connecting…',
      live: 'Live',
      reconnecting: 'Reconnecting…',
      offline: 'Offline',
    };
    if (el.dataset.state === state) return;
    el.dataset.state = state;
    document.body.dataset.connection = state;
    const text = el.querySelector('.connection-text') || el;
    text.textContent = labels[state];
  }
}

// ── what a device remembers ────────────────────────────────────────────

/** A JSON value from localStorage, or `fallback` when absent, unreadable or refused. */
export function readStored(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** Stores a JSON value; storage refused (private mode, quota) keeps it in memory only. */
export function writeStored(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

// ── the chime ──────────────────────────────────────────────────────────

const COALESCE_MS = 700;
/** Notes (Hz) and their start offsets (s): a rising two-tone for a ticket, three quick notes for a call. */
const TUNES = {
  ticket: [
    [880, 0],
    [1318.5, 0.16],
  ],
  service: [
    [1046.5, 0],
    [1046.5, 0.14],
    [1568, 0.28],
  ],
};

/**
 * A staff page's chime, synthesised with WebAudio (no audio files), with its
 * mute toggle (button#sound-toggle, hooks listed at the top of this file).
 *
 * Browsers only let a page start audio after a user gesture, so the
 * AudioContext is created or resumed on one: the sign-in (the token form's
 * submit), or any tap or key press on the page when the token was already
 * known (a reload). Until then #sound-hint asks for a tap.
 *
 * `mutedKey` is where the mute is kept on this device (localStorage, "1" =
 * muted), `what` names what chimes in the toggle's title ("each new
 * ticket"), `preview` the tune played when the sound is turned back on.
 */
export class Chime {
  constructor({ mutedKey, what, preview = 'ticket' }) {
    Object.assign(this, { mutedKey, what, preview });
    this.button = document.getElementById('sound-toggle');
    this.hint = document.getElementById('sound-hint');
    this.muted = readStored(mutedKey, 0) === 1;
    this.ctx = null;
    this.played = 0;
    this.mutedCount = 0;
    // performance.now() counts from the page's start: 0 would swallow a
    // chime in its first COALESCE_MS (a call heard right after a reload).
    this.last = -Infinity;
    this.button.addEventListener('click', () => this.setMuted(!this.muted));
    // Any gesture may unlock the audio (the first one does).
    const unlock = () => this.unlock();
    document.addEventListener('pointerdown', unlock, { capture: true });
    document.addEventListener('keydown', unlock, { capture: true });
    // Signing in is a gesture too (the forms are drawn later, so on the document).
    document.addEventListener('submit', unlock, { capture: true });
    this.update();
  }

  /** Create or resume the AudioContext: call it from a user gesture. */
  unlock() {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) {
      this.update();
      return;
    }
    try {
      if (!this.ctx) {
        this.ctx = new Ctx();
        this.ctx.addEventListener('statechange', () => this.update());
      }
      if (this.ctx.state === 'suspended') this.ctx.resume().then(() => this.update(), () => this.update());
    } catch {
      this.ctx = null;
    }
    this.update();
  }

  setMuted(muted) {
    this.muted = muted;
    writeStored(this.mutedKey, muted ? 1 : 0);
    if (!muted) {
      this.unlock();
      this.play(this.preview, { preview: true });
    }
    this.update();
  }

  /** A chime for a new ticket ('ticket') or a table's call ('service'). */
  play(kind = 'ticket', { preview = false } = {}) {
    const now = performance.now();
    if (!preview) {
      if (now - this.last < COALESCE_MS) return;
      this.last = now;
      if (this.muted) {
        this.mutedCount += 1;
        this.update();
        return;
      }
      this.played += 1;
      this.update();
    }
    const ctx = this.ctx;
    if (!ctx || ctx.state !== 'running') return;
    try {
      const start = ctx.currentTime + 0.02;
      const master = ctx.createGain();
      master.gain.value = 0.5;
      master.connect(ctx.destination);
      for (const [freq, offset] of TUNES[kind] || TUNES.ticket) {
        const osc = ctx.createOscillator();
        const gain = ctx.createGain();
        osc.type = 'sine';
        osc.frequency.value = freq;
        const t = start + offset;
        gain.gain.setValueAtTime(0.0001, t);
        gain.gain.exponentialRampToValueAtTime(0.8, t + 0.015);
        gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.5);
        osc.connect(gain).connect(master);
        osc.start(t);
        osc.stop(t + 0.55);
      }
    } catch {
      // No sound this time; the counters still tell what was asked for.
    }
  }

  get audioState() {
    if (!(window.AudioContext || window.webkitAudioContext)) return 'unavailable';
    return this.ctx && this.ctx.state === 'running' ? 'running' : 'suspended';
  }

  update() {
    const b = this.button;
    const state = this.audioState;
    b.setAttribute('aria-pressed', this.muted ? 'true' : 'false');
    b.dataset.audio = state;
    b.dataset.chimes = String(this.played);
    b.dataset.chimesMuted = String(this.mutedCount);
    b.title = this.muted
      ? `Sound is off: ${this.what} makes no chime on this screen.`
      : state === 'running'
        ? `A chime sounds for ${this.what}. Press to mute this screen.`
        : state === 'unavailable'
          ? 'This browser cannot play sound.'
          : 'Sound starts after a tap on the screen.';
    if (this.hint) this.hint.hidden = this.muted || state !== 'suspended';
  }
}

// ── tables calling ─────────────────────────────────────────────────────

/**
 * The shop's open service requests: tables calling staff (`kind: "call"`)
 * or asking for the bill (`"bill"`). `load()` reads them (GET
 * /api/v1/shops/{shopId}/service-requests?status=open) on start and after a
 * reconnect; the shop stream's `service.requested` / `service.acknowledged`
 * go to `requested(req)` / `acknowledged(req)`. A request stays until it is
 * acknowledged (here, on another screen, or by a checkout): a table
 * waiting is never dropped by the clock.
 *
 * `onChange()` runs after any change (draw the list); `onNew(requests)` with
 * the requests heard of for the first time, live or found by a re-read
 * after the first (those on screen when the page opens are not new).
 */
export class ServiceRequests {
  constructor({ shopId, onChange, onNew }) {
    Object.assign(this, { shopId, onChange, onNew });
    /** The open requests by id. */
    this.byId = new Map();
    /** Ids heard acknowledged: a list read before the ack cannot bring them back. */
    this.done = new Set();
    /** Ids with an acknowledgement on its way. */
    this.busy = new Set();
    this.listed = false;
  }

  /** The open requests, oldest first. */
  get open() {
    return [...this.byId.values()].sort((a, b) =>
      compareInstants(a.createdAt, b.createdAt) || (a.requestId < b.requestId ? -1 : 1),
    );
  }

  async load() {
    let requests;
    try {
      ({ requests } = await api(
        `/api/v1/shops/${encodeURIComponent(this.shopId)}/service-requests?status=open&limit=500`,
        { retries: 2 },
      ));
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the tables calling: ${problemText(err)}`, 'service');
      return;
    }
    clearProblem('service');
    const open = new Map(requests.filter((r) => !this.done.has(r.requestId)).map((r) => [r.requestId, r]));
    const unseen = [...open.values()].filter((r) => !this.byId.has(r.requestId));
    this.byId = open;
    if (this.listed && unseen.length) this.onNew(unseen);
    this.listed = true;
    this.onChange();
  }

  requested(req) {
    if (!req || typeof req.requestId !== 'string' || this.done.has(req.requestId)) return;
    if (req.status && req.status !== 'open') {
      this.acknowledged(req);
      return;
    }
    const isNew = !this.byId.has(req.requestId);
    this.byId.set(req.requestId, req);
    if (isNew) this.onNew([req]);
    this.onChange();
  }

  acknowledged(req) {
    if (!req || typeof req.requestId !== 'string') return;
    this.done.add(req.requestId);
    if (this.byId.delete(req.requestId)) this.onChange();
  }

  /**
   * POST …/service-requests/{id}/ack. The server answers a second ack like
   * the first, so a retry needs no key. Resolves to the request
   * acknowledged (null if it is not open here, or already on its way);
   * rejects with the ApiProblem (a 404 takes it off the list first).
   */
  async acknowledge(requestId) {
    const req = this.byId.get(requestId);
    if (!req || this.busy.has(requestId)) return null;
    this.busy.add(requestId);
    this.onChange();
    try {
      const acked = await api(`/api/v1/service-requests/${encodeURIComponent(requestId)}/ack`, {
        method: 'POST',
        retries: 2,
      });
      this.acknowledged(acked);
      return acked;
    } catch (err) {
      if (err.status === 404) this.acknowledged(req);
      throw err;
    } finally {
      this.busy.delete(requestId);
      this.onChange();
    }
  }
}

/** "calls for service" / "asks for the bill". */
export function serviceAsk(req) {
  return req.kind === 'bill' ? 'asks for the bill' : 'calls for service';
}
