// Unit tests of web/order-sdk.js with fake fetch, storage, clock and timers.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import {
  compareInstants,
  createOrderClient,
  createMenuLoader,
  subscribeSessionEvents,
  getOrCreateClientId,
  canonicalCart,
  canonicalOrderCart,
  lineNoteProblem,
  formatMoney,
  parseRetryAfter,
  OrdergateError,
  uuidV4,
  getTable,
  getWait,
  GUEST_EVENT_TYPES,
  SERVICE_KINDS,
} from '../order-sdk.js';

const SESSION = '5cf5decb-6660-46b9-b914-98556405ece7';
const SHOP = 'e01141ae-a0c4-4236-9e4e-70bdd4868400';
const PIN = '794874';
const BURGER = 'd2d4b095-5407-48f4-baf2-be954837b2a3';
const PIE = '602afab5-377e-4e34-9ff7-98fcbf9b51fa';
const CHEESE = '270b211b-b857-4cbb-99d2-72b3d3c1a388';
const BACON = 'edeaff68-d3ab-44b5-9473-0f14af363723';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ORDERS_URL = `/api/v1/sessions/${SESSION}/orders`;
const SESSION_URL = `/api/v1/sessions/${SESSION}`;
const ACCESS_URL = `/api/v1/sessions/${SESSION}/access`;
const TOKEN_KEY = `ordergate.guestToken.${SESSION}`;
const T0 = Date.parse('2026-11-30T12:00:00Z');

const CART = { items: [{ menuItemId: BURGER, quantity: 2, toppingIds: [CHEESE, BACON] }], note: 'no onions' };
const OTHER_CART = { items: [{ menuItemId: PIE, quantity: 1 }] };

// ── fakes ───────────────────────────────────────────────────────────────

function memoryStorage(initial = {}) {
  const map = new Map(Object.entries(initial));
  return {
    map,
    getItem: (k) => (map.has(k) ? map.get(k) : null),
    setItem: (k, v) => { map.set(k, String(v)); },
    removeItem: (k) => { map.delete(k); },
  };
}

function problem(status, code, extra = {}, headers = {}) {
  return () => new Response(
    JSON.stringify({ type: `urn:ordergate:problem:${code.toLowerCase()}`, title: code, status, code, ...extra }),
    { status, headers: { 'content-type': 'application/problem+json', ...headers } },
  );
}

function json(status, body, headers = {}) {
  return () => new Response(JSON.stringify(body), {
    status, headers: { 'content-type': 'application/json', ...headers },
  });
}

function networkError() {
  return () => { throw new TypeError('fetch failed'); };
}

/** A request that never answers: only the client's timeout ends it. */
function hang(h) {
  return (url, init) => new Promise((_, reject) => {
    init.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    // Let the timer the client armed for this request fire ...
    queueMicrotask(() => h.fireTimeout());
    // ... which must abort the request (else fail here rather than hang).
    setImmediate(() => {
      if (!init.signal.aborted) reject(new assert.AssertionError({ message: 'the timeout did not abort the request' }));
    });
  });
}

function order(overrides = {}) {
  return {
    orderId: '01938a6e-0000-7000-8000-000000000001',
    shopId: SHOP,
    sessionId: SESSION,
    tableLabel: 'T1',
    ticketNumber: 7,
    status: 'placed',
    source: 'guest',
    clientId: 'web-test',
    items: [{
      menuItemId: BURGER, name: 'Burger', unitPrice: 1290, quantity: 2,
      toppings: [{ toppingId: BACON, name: 'Bacon', price: 200 }, { toppingId: CHEESE, name: 'Cheese', price: 150 }],
      lineTotal: 3970,
    }],
    note: 'no onions',
    total: 3970,
    createdAt: new Date(T0).toISOString(),
    version: 1,
    idempotentReplay: false,
    ...overrides,
  };
}

let grants = 0;
/** The server's answer to a PIN-for-token exchange: a fresh token each time. */
function grant() {
  grants += 1;
  return json(200, { guestToken: `og_guest_test_${grants}`, sessionId: SESSION, expiresAt: new Date(T0 + 43_200_000).toISOString() });
}

/**
 * A client wired to fakes. `script` is the list of answers, one per request,
 * in order; a request beyond it fails the test. Exchanges of the PIN for a
 * guest token (POST …/access) are answered from `access` instead, and once
 * it is used up by granting a fresh token; they are recorded in `exchanges`,
 * not in `calls`.
 */
function harness({
  script = [], access = [], random = () => 0, storage = memoryStorage(), tokenStorage = memoryStorage(), ...options
} = {}) {
  const h = {
    calls: [],
    exchanges: [],
    sleeps: [],
    progress: [],
    timers: [],
    clock: T0,
    storage,
    tokenStorage,
    script: [...script],
    access: [...access],
  };
  let uuids = 0;
  h.randomUUID = () => {
    uuids += 1;
    return `00000000-0000-4000-8000-${String(uuids).padStart(12, '0')}`;
  };
  h.fetch = async (url, init = {}) => {
    const call = {
      url,
      method: init.method ?? 'GET',
      headers: { ...(init.headers ?? {}) },
      body: init.body ? JSON.parse(init.body) : undefined,
      signal: init.signal,
    };
    if (url.endsWith(ACCESS_URL)) {
      h.exchanges.push(call);
      return (h.access.shift() ?? grant())(url, init);
    }
    h.calls.push(call);
    const step = h.script.shift();
    if (!step) throw new Error(`unexpected request: ${init.method ?? 'GET'} ${url}`);
    return step(url, init);
  };
  h.fireTimeout = () => {
    const t = h.timers.find((x) => !x.cleared && !x.fired);
    assert.ok(t, 'a timeout timer is armed');
    t.fired = true;
    t.fn();
  };
  h.client = createOrderClient({
    sessionId: SESSION,
    pin: PIN,
    fetch: h.fetch,
    storage,
    tokenStorage,
    now: () => h.clock,
    sleep: async (ms) => { h.sleeps.push(ms); h.clock += ms; },
    setTimeout: (fn, ms) => { const t = { fn, ms }; h.timers.push(t); return t; },
    clearTimeout: (t) => { if (t) t.cleared = true; },
    random,
    randomUUID: h.randomUUID,
    onProgress: (e) => h.progress.push(e),
    ...options,
  });
  h.posts = () => h.calls.filter((c) => c.method === 'POST');
  h.keys = () => h.posts().map((c) => c.headers['Idempotency-Key']);
  return h;
}

// ── client id ───────────────────────────────────────────────────────────

describe('client id', () => {
  test('is generated once per device, stored, and reused', () => {
    const storage = memoryStorage();
    const a = harness({ storage });
    assert.match(a.client.clientId, /^[A-Za-z0-9._:-]{1,64}$/);
    assert.equal(storage.map.get('ordergate.clientId'), a.client.clientId);
    const b = harness({ storage });
    assert.equal(b.client.clientId, a.client.clientId);
  });

  test('an invalid stored id is replaced', () => {
    const storage = memoryStorage({ 'ordergate.clientId': 'bad id with spaces' });
    const id = getOrCreateClientId(storage, () => '11111111-1111-4111-8111-111111111111');
    assert.equal(id, 'web-11111111-1111-4111-8111-111111111111');
    assert.equal(storage.map.get('ordergate.clientId'), id);
  });

  test('works when storage throws (private mode)', () => {
    const broken = { getItem() { throw new Error('denied'); }, setItem() { throw new Error('denied'); }, removeItem() {} };
    const h = harness({ storage: broken });
    assert.match(h.client.clientId, /^web-/);
  });

  test('is sent as X-Client-Id on every order attempt', async () => {
    const h = harness({ script: [networkError(), json(201, order())] });
    await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    for (const c of h.calls) assert.equal(c.headers['X-Client-Id'], h.client.clientId);
  });
});

// ── the request ─────────────────────────────────────────────────────────

describe('placing an order', () => {
  test('one POST with key, guest token, client id and the cart', async () => {
    const h = harness({ script: [json(201, order(), { location: '/api/v1/orders/x' })] });
    const result = await h.client.submit(CART);
    assert.equal(h.calls.length, 1);
    const [c] = h.calls;
    assert.equal(c.method, 'POST');
    assert.equal(c.url, ORDERS_URL);
    assert.match(c.headers['Idempotency-Key'], UUID_V4);
    assert.equal(c.headers.Authorization, `Bearer ${h.tokenStorage.map.get(TOKEN_KEY)}`);
    assert.equal(c.headers['X-Session-PIN'], undefined, 'the token instead of the PIN, never both');
    assert.equal(c.headers['Content-Type'], 'application/json');
    assert.deepEqual(c.body, {
      items: [{ menuItemId: BURGER, quantity: 2, toppingIds: [CHEESE, BACON] }],
      note: 'no onions',
      allowRepeat: false,
    });
    assert.equal(result.outcome, 'placed');
    assert.equal(result.alreadyPlaced, false);
    assert.equal(result.order.ticketNumber, 7);
    assert.equal(result.attempts, 1);
    assert.equal(result.idempotencyKey, c.headers['Idempotency-Key']);
    assert.deepEqual(h.sleeps, []);
  });

  test('the PIN goes only to the token exchange, in its header', async () => {
    const h = harness({ script: [json(201, order())] });
    await h.client.submit(CART);
    assert.equal(h.exchanges.length, 1);
    const [swap] = h.exchanges;
    assert.equal(swap.method, 'POST');
    assert.equal(swap.headers['X-Session-PIN'], PIN);
    assert.ok(!swap.url.includes(PIN));
    assert.equal(swap.body, undefined);
    assert.ok(!JSON.stringify(h.calls).includes(PIN), 'the order carries no trace of the PIN');
  });

  test('baseUrl is prefixed', async () => {
    const h = harness({ script: [json(201, order())], baseUrl: 'https://diner.example/' });
    await h.client.submit(CART);
    assert.equal(h.calls[0].url, `https://diner.example${ORDERS_URL}`);
  });

  test('a replayed answer is reported as placed (outcome replayed)', async () => {
    const h = harness({
      script: [json(201, order({ idempotentReplay: true }), { 'idempotent-replayed': 'true' })],
    });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'replayed');
    assert.equal(result.alreadyPlaced, false);
  });

  test('an impossible cart is refused without a request', async () => {
    const h = harness();
    for (const cart of [
      { items: [] },
      {},
      { items: [{ menuItemId: BURGER, quantity: 0 }] },
      { items: [{ menuItemId: BURGER, quantity: 100 }] },
      { items: [{ menuItemId: BURGER, quantity: 1.5 }] },
      { items: Array.from({ length: 51 }, () => ({ menuItemId: BURGER, quantity: 1 })) },
      { items: [{ menuItemId: BURGER, quantity: 1 }], note: 'x'.repeat(201) },
    ]) {
      await assert.rejects(h.client.submit(cart), { name: 'OrdergateError', code: 'INVALID_CART' });
    }
    assert.equal(h.calls.length, 0);
    // 200 characters (counted as characters, not UTF-16 units) is fine.
    const ok = harness({ script: [json(201, order())] });
    await ok.client.submit({ items: [{ menuItemId: BURGER, quantity: 99 }], note: '🍔'.repeat(200) });
    assert.equal(ok.calls.length, 1);
  });
});

// ── guest token ─────────────────────────────────────────────────────────

describe('guest token', () => {
  const bearer = (c) => c.headers.Authorization;

  test('the PIN is exchanged once, on first use, and the token stored under the session id', async () => {
    const h = harness({ script: [json(200, { sessionId: SESSION }), json(200, { orders: [] }), json(201, order())] });
    // Calls made together wait for the same exchange.
    await Promise.all([h.client.getSession(), h.client.listOrders()]);
    await h.client.submit(CART);
    assert.equal(h.exchanges.length, 1);
    assert.equal(h.exchanges[0].url, ACCESS_URL);
    const token = h.tokenStorage.map.get(TOKEN_KEY);
    assert.match(token, /^og_guest_test_\d+$/);
    assert.deepEqual(h.calls.map(bearer), Array(3).fill(`Bearer ${token}`));
    assert.ok(h.calls.every((c) => c.headers['X-Session-PIN'] === undefined));
    assert.ok(!h.storage.map.has(TOKEN_KEY), 'not in the device-wide storage');
  });

  test('a stored token is used without a new exchange (a reload)', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_kept' });
    const h = harness({ tokenStorage, script: [json(200, { sessionId: SESSION })] });
    await h.client.getSession();
    assert.equal(h.exchanges.length, 0);
    assert.equal(bearer(h.calls[0]), 'Bearer og_guest_kept');
  });

  test('each session has its own token', async () => {
    const OTHER = '0a6f7c1e-58a4-4c36-8f5e-0d0f2b1b9e11';
    const tokenStorage = memoryStorage({ [`ordergate.guestToken.${OTHER}`]: 'og_guest_other_table' });
    const h = harness({ tokenStorage, script: [json(200, { sessionId: SESSION })] });
    await h.client.getSession();
    assert.equal(h.exchanges.length, 1, 'the other table\'s token is not this one\'s');
    assert.notEqual(bearer(h.calls[0]), 'Bearer og_guest_other_table');
    assert.equal(tokenStorage.map.get(`ordergate.guestToken.${OTHER}`), 'og_guest_other_table', 'and it is left alone');
    assert.equal(bearer(h.calls[0]), `Bearer ${tokenStorage.map.get(TOKEN_KEY)}`);
  });

  for (const [what, failure] of [
    ['unreachable', networkError()],
    ['failing (503)', problem(503, 'UNAVAILABLE', {}, { 'retry-after': '5' })],
    ['missing (a server without it)', problem(404, 'NOT_FOUND')],
  ]) {
    test(`an exchange ${what}: the PIN is used meanwhile, and the exchange tried again later`, async () => {
      const h = harness({
        access: [failure],
        exchangeRetryMs: 30_000,
        script: [json(200, { sessionId: SESSION }), json(200, { orders: [] }), json(200, { orders: [] })],
      });
      await h.client.getSession();
      assert.equal(h.calls[0].headers['X-Session-PIN'], PIN);
      assert.equal(bearer(h.calls[0]), undefined);
      h.clock += 29_000;
      await h.client.listOrders();
      assert.equal(h.exchanges.length, 1, 'not again too soon');
      assert.equal(h.calls[1].headers['X-Session-PIN'], PIN);
      h.clock += 1_000;
      await h.client.listOrders();
      assert.equal(h.exchanges.length, 2);
      assert.equal(bearer(h.calls[2]), `Bearer ${h.tokenStorage.map.get(TOKEN_KEY)}`);
      assert.equal(h.calls[2].headers['X-Session-PIN'], undefined);
    });
  }

  for (const [status, code] of [[401, 'PIN_INVALID'], [429, 'PIN_LOCKED'], [410, 'SESSION_CLOSED']]) {
    test(`an exchange refused ${code} is the answer: the PIN is not sent again`, async () => {
      const h = harness({ access: [problem(status, code, {}, { 'retry-after': '300' })] });
      await assert.rejects(h.client.getSession(), { code, status });
      assert.equal(h.calls.length, 0);
      assert.equal(h.tokenStorage.map.has(TOKEN_KEY), false);
    });
  }

  test('a token answered 401 UNAUTHORIZED is dropped and traded in again', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_forgotten' });
    const h = harness({
      tokenStorage,
      script: [problem(401, 'UNAUTHORIZED'), json(200, { sessionId: SESSION, shopId: SHOP })],
    });
    assert.equal((await h.client.getSession()).shopId, SHOP);
    assert.equal(bearer(h.calls[0]), 'Bearer og_guest_forgotten');
    assert.equal(h.exchanges.length, 1);
    assert.equal(h.exchanges[0].headers['X-Session-PIN'], PIN);
    const fresh = tokenStorage.map.get(TOKEN_KEY);
    assert.notEqual(fresh, 'og_guest_forgotten');
    assert.equal(bearer(h.calls[1]), `Bearer ${fresh}`);
  });

  test('calls refused with the same old token trade it in once', async () => {
    let late;
    const held = new Promise((resolve) => { late = resolve; });
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_forgotten' });
    const h = harness({
      tokenStorage,
      script: [
        problem(401, 'UNAUTHORIZED'),
        () => held.then(problem(401, 'UNAUTHORIZED')),
        json(200, { sessionId: SESSION }),
        json(200, { orders: [] }),
      ],
    });
    const reading = h.client.getSession();
    const listing = h.client.listOrders();
    await reading; // traded in already, before the second refusal arrives
    late();
    await listing;
    assert.equal(h.exchanges.length, 1);
    const fresh = `Bearer ${tokenStorage.map.get(TOKEN_KEY)}`;
    assert.deepEqual(h.calls.map(bearer), ['Bearer og_guest_forgotten', 'Bearer og_guest_forgotten', fresh, fresh]);
  });

  test('a token refused twice in a row is an error, not a loop', async () => {
    const h = harness({ script: [problem(401, 'UNAUTHORIZED'), problem(401, 'UNAUTHORIZED')] });
    await assert.rejects(h.client.getSession(), { code: 'UNAUTHORIZED' });
    assert.equal(h.calls.length, 2);
    assert.equal(h.exchanges.length, 2);
  });

  test('401 UNAUTHORIZED to an order: the same key goes again at once with a new token', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_forgotten' });
    const h = harness({ tokenStorage, script: [problem(401, 'UNAUTHORIZED'), json(201, order())] });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'placed');
    assert.equal(h.posts().length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
    assert.deepEqual(h.posts().map(bearer), ['Bearer og_guest_forgotten', `Bearer ${tokenStorage.map.get(TOKEN_KEY)}`]);
    assert.deepEqual(h.sleeps, []);
  });

  test('an order retried after a lost answer keeps its key when the credential changes', async () => {
    // The token is refused on the retry; the PIN goes meanwhile (the
    // exchange is down), then the replay comes back to it.
    const h = harness({
      access: [grant(), networkError()],
      script: [networkError(), problem(401, 'UNAUTHORIZED'), json(201, order({ idempotentReplay: true }))],
    });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'replayed');
    assert.equal(new Set(h.keys()).size, 1);
    const [first, second, third] = h.posts();
    assert.ok(bearer(first) && bearer(first) === bearer(second));
    assert.equal(third.headers['X-Session-PIN'], PIN);
    assert.equal(bearer(third), undefined);
  });

  test('410 SESSION_CLOSED to a token: the same key once more with the PIN, for a replay', async () => {
    // Tokens die at checkout, but an order committed before it still
    // replays to the PIN.
    const h = harness({ script: [networkError(), problem(410, 'SESSION_CLOSED'), json(201, order({ idempotentReplay: true }))] });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'replayed');
    assert.equal(new Set(h.keys()).size, 1);
    assert.ok(bearer(h.posts()[1]));
    assert.equal(h.posts()[2].headers['X-Session-PIN'], PIN);
    assert.equal(h.tokenStorage.map.has(TOKEN_KEY), false, 'the dead token is dropped');

    const closed = harness({ script: [problem(410, 'SESSION_CLOSED'), problem(410, 'SESSION_CLOSED')] });
    await assert.rejects(closed.client.submit(CART), { code: 'SESSION_CLOSED' });
    assert.equal(closed.posts().length, 2);
    assert.equal(closed.keys()[0], closed.keys()[1]);
    // A read after checkout: the token is dropped too, and the 410 stands.
    const read = harness({ script: [problem(410, 'SESSION_CLOSED')] });
    await assert.rejects(read.client.getSession(), { code: 'SESSION_CLOSED' });
    assert.equal(read.calls.length, 1);
    assert.equal(read.tokenStorage.map.has(TOKEN_KEY), false);
  });

  test('a token that died at checkout answered 401: the new exchange\'s SESSION_CLOSED is the answer', async () => {
    const read = harness({ access: [grant(), problem(410, 'SESSION_CLOSED')], script: [problem(401, 'UNAUTHORIZED')] });
    await assert.rejects(read.client.getSession(), { code: 'SESSION_CLOSED', status: 410 });
    assert.equal(read.calls.length, 1, 'the PIN is not sent to a closed table');
    assert.equal(read.tokenStorage.map.has(TOKEN_KEY), false);
    // An order's retry still asks for its replay, with the PIN and its key.
    const h = harness({
      access: [grant(), problem(410, 'SESSION_CLOSED')],
      script: [networkError(), problem(401, 'UNAUTHORIZED'), json(201, order({ idempotentReplay: true }))],
    });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'replayed');
    assert.equal(new Set(h.keys()).size, 1);
    assert.equal(h.posts()[2].headers['X-Session-PIN'], PIN);
  });

  test('an exchange that finds the table closed still lets an order ask for its replay with the PIN', async () => {
    const h = harness({ access: [problem(410, 'SESSION_CLOSED')], script: [json(201, order({ idempotentReplay: true }))] });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'replayed');
    assert.equal(h.posts()[0].headers['X-Session-PIN'], PIN);
  });
});

describe('without a PIN (the page took it out of its address)', () => {
  const bearer = (c) => c.headers.Authorization;

  test('the stored token is the credential: used at once, no exchange, no PIN anywhere', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_kept' });
    const h = harness({ pin: null, tokenStorage, script: [json(200, { sessionId: SESSION }), json(201, order())] });
    assert.equal(h.client.hasAccess, true);
    assert.equal(h.client.hasToken, true);
    await h.client.getSession();
    await h.client.submit(CART);
    assert.equal(h.exchanges.length, 0);
    assert.deepEqual(h.calls.map(bearer), ['Bearer og_guest_kept', 'Bearer og_guest_kept']);
    assert.ok(h.calls.every((c) => c.headers['X-Session-PIN'] === undefined));
  });

  test('neither PIN nor token: no access, and nothing is sent', async () => {
    const h = harness({ pin: null });
    assert.equal(h.client.hasAccess, false);
    await assert.rejects(h.client.getSession(), { code: 'ACCESS_ENDED', status: 401 });
    await assert.rejects(h.client.submit(CART), { code: 'ACCESS_ENDED' });
    assert.equal(h.calls.length + h.exchanges.length, 0);
  });

  test('a refused token (expired, or dead since checkout) ends the access: ACCESS_ENDED, dropped, said', async () => {
    const tokens = [];
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_dead' });
    const h = harness({ pin: null, tokenStorage, onToken: (held) => tokens.push(held), script: [problem(401, 'UNAUTHORIZED')] });
    await assert.rejects(h.client.getSession(), { code: 'ACCESS_ENDED' });
    assert.equal(h.calls.length, 1, 'no second try with nothing to send');
    assert.equal(h.exchanges.length, 0);
    assert.equal(tokenStorage.map.has(TOKEN_KEY), false);
    assert.equal(h.client.hasAccess, false);
    assert.deepEqual(tokens, [false]);
  });

  test('an order whose token is refused: ACCESS_ENDED, the key kept', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_dead' });
    const h = harness({ pin: null, tokenStorage, script: [problem(401, 'UNAUTHORIZED')] });
    await assert.rejects(h.client.submit(CART), { code: 'ACCESS_ENDED' });
    assert.equal(h.posts().length, 1);
    assert.equal(h.client.pendingKeyFor(CART), h.keys()[0], 'the cart keeps its key');
  });

  test('an order refused SESSION_CLOSED to the token is that answer (no PIN to ask for a replay with)', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_kept' });
    const h = harness({ pin: null, tokenStorage, script: [problem(410, 'SESSION_CLOSED')] });
    await assert.rejects(h.client.submit(CART), { code: 'SESSION_CLOSED', status: 410 });
    assert.equal(h.posts().length, 1);
    assert.ok(h.posts().every((c) => c.headers['X-Session-PIN'] === undefined));
  });

  test('the table\'s stream ends with ACCESS_ENDED once the token is refused', async () => {
    FakeEventSource.instances = [];
    const statuses = [];
    const ends = [];
    const timers = [];
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_kept' });
    const h = harness({ pin: null, tokenStorage, script: [problem(401, 'UNAUTHORIZED')] });
    h.client.subscribeEvents({
      EventSource: FakeEventSource,
      setTimeout: (fn, ms) => { timers.push({ fn, ms }); return timers.length; },
      clearTimeout: () => {},
      random: () => 1,
      onStatus: (status) => statuses.push(status),
      onEnd: (err) => ends.push(err),
    });
    await new Promise((resolve) => setImmediate(resolve));
    const [es] = FakeEventSource.instances;
    assert.equal(es.url, `/api/v1/sessions/${SESSION}/events?access_token=og_guest_kept`);
    es.open();
    es.readyState = 2;
    es.emit('error');
    timers[0].fn();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(ends[0]?.code, 'ACCESS_ENDED');
    assert.equal(statuses.at(-1), 'closed');
    assert.equal(FakeEventSource.instances.length, 1, 'no new stream');
  });

  test('onToken tells when a token is stored', async () => {
    const tokens = [];
    const h = harness({ onToken: (held) => tokens.push(held), script: [json(200, { sessionId: SESSION })] });
    assert.equal(h.client.hasToken, false);
    await h.client.getSession();
    assert.deepEqual(tokens, [true]);
    assert.equal(h.client.hasToken, true);
  });
});

describe('pendingKeyFor', () => {
  test('is the key kept for a cart after NOT_CONFIRMED (also after a reload), and creates none', async () => {
    const storage = memoryStorage();
    const h = harness({ storage, maxAttempts: 1, script: [networkError(), networkError()] });
    assert.equal(h.client.pendingKeyFor(CART), null, 'nothing before a submit');
    assert.equal(h.client.currentKey, null, 'and nothing was made');
    await assert.rejects(h.client.submit(CART), { code: 'NOT_CONFIRMED' });
    const key = h.keys()[0];
    assert.equal(h.client.pendingKeyFor(CART), key);
    assert.equal(h.client.pendingKeyFor({ ...CART, note: '  no onions ' }), key, 'canonical form');
    assert.equal(h.client.pendingKeyFor(OTHER_CART), null);
    assert.equal(h.client.pendingKeyFor(CART, { allowRepeat: true }), null);
    assert.equal(h.client.currentKey, key, 'asking changed nothing');
    const reloaded = harness({ storage, script: [json(201, order({ idempotentReplay: true }))] });
    assert.equal(reloaded.client.pendingKeyFor(CART), key);
    await reloaded.client.submit(CART);
    assert.equal(reloaded.keys()[0], key);
    assert.equal(reloaded.client.pendingKeyFor(CART), null, 'settled');
  });
});

// ── idempotency keys ────────────────────────────────────────────────────

describe('Idempotency-Key', () => {
  test('is the same across every retry', async () => {
    const h = harness({ script: [networkError(), networkError(), networkError(), json(201, order())] });
    const result = await h.client.submit(CART);
    assert.equal(h.calls.length, 4);
    assert.equal(new Set(h.keys()).size, 1);
    assert.equal(result.attempts, 4);
    assert.equal(result.idempotencyKey, h.keys()[0]);
  });

  test('is the same for a re-tap after a failure', async () => {
    const h = harness({
      script: [problem(409, 'OUT_OF_STOCK', { shortages: [] }), json(201, order())],
    });
    await assert.rejects(h.client.submit(CART), { code: 'OUT_OF_STOCK' });
    await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
  });

  test('is the same for an equivalent cart (canonical form)', async () => {
    const h = harness();
    const k1 = h.client.keyFor({
      items: [
        { menuItemId: PIE, quantity: 1 },
        { menuItemId: BURGER, quantity: 1, toppingIds: [CHEESE, BACON] },
        { menuItemId: BURGER, quantity: 1, toppingIds: [BACON, CHEESE] },
      ],
      note: '  no onions ',
    });
    const k2 = h.client.keyFor({
      items: [
        { menuItemId: BURGER, quantity: 2, toppingIds: [BACON, CHEESE, CHEESE] },
        { menuItemId: PIE, quantity: 1, toppingIds: [] },
      ],
      note: 'no onions',
    });
    assert.equal(k1, k2);
    assert.match(k1, UUID_V4);
  });

  test('is renewed when the cart changes', async () => {
    const shortage = problem(409, 'OUT_OF_STOCK', { shortages: [] });
    const h = harness({ script: [shortage, shortage, shortage] });
    await assert.rejects(h.client.submit(CART), { code: 'OUT_OF_STOCK' });
    await assert.rejects(h.client.submit({ ...CART, note: 'no onions, please' }), { code: 'OUT_OF_STOCK' });
    await assert.rejects(h.client.submit(CART, { allowRepeat: true }), { code: 'OUT_OF_STOCK' });
    const [a, b, c] = h.keys();
    assert.notEqual(a, b);
    assert.notEqual(b, c);
    assert.notEqual(a, c);
    assert.equal(h.calls[2].body.allowRepeat, true);
  });

  test('going back to an earlier cart does not reuse its old key', async () => {
    const h = harness();
    const k1 = h.client.keyFor(CART);
    const k2 = h.client.keyFor(OTHER_CART);
    const k3 = h.client.keyFor(CART);
    assert.notEqual(k1, k2);
    assert.notEqual(k3, k1);
  });

  test('is renewed once an order is confirmed', async () => {
    const original = order();
    const h = harness({
      script: [
        json(201, original),
        problem(409, 'DUPLICATE_PAYLOAD', { originalOrderId: original.orderId, originalOrder: original }),
      ],
    });
    await h.client.submit(CART);
    assert.equal(h.client.currentKey, null);
    const again = await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    assert.notEqual(h.keys()[0], h.keys()[1]);
    assert.equal(again.outcome, 'duplicate');
  });

  test('survives a reload (stored) until the order is confirmed', async () => {
    const storage = memoryStorage();
    const first = harness({ storage, script: [problem(409, 'OUT_OF_STOCK', { shortages: [] })] });
    await assert.rejects(first.client.submit(CART), { code: 'OUT_OF_STOCK' });
    const second = harness({ storage, script: [json(201, order())] });
    await second.client.submit(CART);
    assert.equal(second.keys()[0], first.keys()[0]);
    // confirmed: gone from storage, the next page gets a fresh key
    const third = harness({ storage });
    assert.equal(third.client.currentKey, null);
    assert.notEqual(third.client.keyFor(CART), first.keys()[0]);
  });

  test('a stored key older than keyTtlMs is not reused', () => {
    const storage = memoryStorage();
    const first = harness({ storage });
    const key = first.client.keyFor(CART);
    const later = harness({ storage, keyTtlMs: 1000 });
    later.clock = T0 + 5000;
    const fresh = harness({ storage, keyTtlMs: 1000, now: () => T0 + 5000 });
    assert.equal(later.client.currentKey, key); // read at T0: still fresh
    assert.equal(fresh.client.currentKey, null);
  });

  test('stored keys of other sessions are purged once expired', () => {
    const storage = memoryStorage({
      'ordergate.pendingKey.old-session': JSON.stringify({ canonical: '{}', key: '11111111-1111-4111-8111-111111111111', at: T0 - 2000 }),
      'ordergate.pendingKey.recent-session': JSON.stringify({ canonical: '{}', key: '22222222-2222-4222-8222-222222222222', at: T0 - 10 }),
      'ordergate.pendingKey.damaged': 'not json',
      'unrelated': 'kept',
    });
    storage.key = (i) => [...storage.map.keys()][i] ?? null;
    Object.defineProperty(storage, 'length', { get: () => storage.map.size });
    harness({ storage, keyTtlMs: 1000 });
    assert.deepEqual([...storage.map.keys()].sort(), ['ordergate.clientId', 'ordergate.pendingKey.recent-session', 'unrelated']);
  });

  test('IDEMPOTENCY_KEY_REUSED drops the key, no retry', async () => {
    const h = harness({ script: [problem(422, 'IDEMPOTENCY_KEY_REUSED'), json(201, order())] });
    await assert.rejects(h.client.submit(CART), { code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });
    assert.equal(h.calls.length, 1);
    await h.client.submit(CART);
    assert.notEqual(h.keys()[0], h.keys()[1]);
  });
});

// ── double taps ─────────────────────────────────────────────────────────

describe('taps while an order is being sent', () => {
  test('a second tap with the same cart joins the pending request', async () => {
    let answer;
    const gate = new Promise((resolve) => { answer = resolve; });
    const h = harness({ script: [() => gate.then(json(201, order()))] });
    const p1 = h.client.submit(CART);
    const p2 = h.client.submit(structuredClone(CART));
    assert.equal(p1, p2);
    assert.equal(h.client.pending, true);
    answer();
    const [r1, r2] = await Promise.all([p1, p2]);
    assert.equal(r1, r2);
    assert.equal(h.calls.length, 1);
    assert.equal(h.client.pending, false);
  });

  test('a tap with an equivalent cart also joins', async () => {
    const h = harness({ script: [json(201, order())] });
    const p1 = h.client.submit(CART);
    const p2 = h.client.submit({ ...CART, note: ' no onions  ' });
    assert.equal(p1, p2);
    await p1;
    assert.equal(h.calls.length, 1);
  });

  test('a tap with a different cart is refused with ORDER_PENDING', async () => {
    let answer;
    const gate = new Promise((resolve) => { answer = resolve; });
    const h = harness({ script: [() => gate.then(json(201, order())), json(201, order({ orderId: 'second' }))] });
    const p1 = h.client.submit(CART);
    const keyDuring = h.client.currentKey;
    await assert.rejects(h.client.submit(OTHER_CART), (err) => {
      assert.ok(err instanceof OrdergateError);
      assert.equal(err.code, 'ORDER_PENDING');
      assert.match(err.message, /still being sent/);
      return true;
    });
    assert.equal(h.client.currentKey, keyDuring, 'the refused tap did not touch the key');
    answer();
    const r1 = await p1;
    assert.equal(r1.order.orderId, order().orderId);
    assert.equal(h.calls.length, 1);
    // Once it is done, the other cart goes through with a key of its own.
    const r2 = await h.client.submit(OTHER_CART);
    assert.equal(r2.order.orderId, 'second');
    assert.equal(h.calls.length, 2);
    assert.notEqual(h.keys()[0], h.keys()[1]);
    assert.deepEqual(h.calls[1].body.items, [{ menuItemId: PIE, quantity: 1, toppingIds: [] }]);
  });

  test('a tap during the backoff wait joins as well', async () => {
    let wake;
    const waiting = new Promise((resolve) => { wake = resolve; });
    let sleeping;
    const asleep = new Promise((resolve) => { sleeping = resolve; });
    const h = harness({
      script: [networkError(), json(201, order())],
      sleep: (ms) => { sleeping(ms); return waiting; },
    });
    const p1 = h.client.submit(CART);
    assert.equal(await asleep, 250);
    assert.equal(h.calls.length, 1);
    const p2 = h.client.submit(CART);
    assert.equal(p1, p2);
    await assert.rejects(h.client.submit(OTHER_CART), { code: 'ORDER_PENDING' });
    wake();
    await p1;
    assert.equal(h.calls.length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
  });
});

// ── retries ─────────────────────────────────────────────────────────────

describe('retries', () => {
  test('after a network error, with exponential backoff and jitter', async () => {
    const h = harness({
      random: () => 1,
      script: [networkError(), networkError(), networkError(), networkError(), networkError(), json(201, order())],
    });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'placed');
    assert.equal(h.calls.length, 6);
    assert.deepEqual(h.sleeps, [500, 1000, 2000, 4000, 8000]);
    assert.deepEqual(h.progress.map((p) => p.phase), [
      'sending', 'waiting', 'retrying', 'waiting', 'retrying', 'waiting', 'retrying',
      'waiting', 'retrying', 'waiting', 'retrying',
    ]);
    assert.equal(h.progress[1].reason, 'NETWORK_ERROR');
  });

  test('jitter spreads the delay over the upper half of the ceiling', async () => {
    const h = harness({ random: () => 0, script: [networkError(), networkError(), json(201, order())] });
    await h.client.submit(CART);
    assert.deepEqual(h.sleeps, [250, 500]);
  });

  test('delays never exceed maxDelayMs', async () => {
    const h = harness({
      random: () => 1, maxDelayMs: 1500, maxAttempts: 5,
      script: [networkError(), networkError(), networkError(), networkError(), json(201, order())],
    });
    await h.client.submit(CART);
    assert.deepEqual(h.sleeps, [500, 1000, 1500, 1500]);
  });

  test('after a timeout (AbortController), with the same key', async () => {
    const h = harness({ timeoutMs: 1234 });
    h.script.push(hang(h), json(201, order()));
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'placed');
    assert.equal(h.calls.length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
    assert.equal(h.timers[0].ms, 1234);
    assert.equal(h.calls[0].signal.aborted, true, 'the timeout aborted the first request');
    assert.equal(h.calls[1].signal.aborted, false);
    assert.equal(h.progress[1].reason, 'TIMEOUT');
    assert.ok(h.timers.every((t) => t.fired || t.cleared), 'no timer is left armed');
  });

  test('after 409 REQUEST_IN_PROGRESS, honouring Retry-After', async () => {
    const h = harness({
      script: [problem(409, 'REQUEST_IN_PROGRESS', {}, { 'retry-after': '1' }), json(201, order({ idempotentReplay: true }))],
    });
    const result = await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
    assert.deepEqual(h.sleeps, [1000]);
    assert.equal(result.outcome, 'replayed');
  });

  test('after 409 SESSION_BUSY, honouring Retry-After', async () => {
    const h = harness({
      script: [problem(409, 'SESSION_BUSY', {}, { 'retry-after': '3' }), json(201, order())],
    });
    await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    assert.equal(h.keys()[0], h.keys()[1]);
    assert.deepEqual(h.sleeps, [3000]);
    assert.equal(h.progress.find((p) => p.phase === 'waiting').reason, 'SESSION_BUSY');
  });

  test('Retry-After shorter than the backoff does not shorten it', async () => {
    const h = harness({
      random: () => 1,
      script: [networkError(), networkError(), problem(409, 'SESSION_BUSY', {}, { 'retry-after': '1' }), json(201, order())],
    });
    await h.client.submit(CART);
    assert.deepEqual(h.sleeps, [500, 1000, 2000]);
  });

  test('after 429 COOLDOWN_ACTIVE, honouring Retry-After', async () => {
    const h = harness({
      script: [problem(429, 'COOLDOWN_ACTIVE', {}, { 'retry-after': '2' }), json(201, order())],
    });
    await h.client.submit(CART);
    assert.equal(h.calls.length, 2);
    assert.deepEqual(h.sleeps, [2000]);
  });

  test('after 5xx (outcome unknown), but not after CATALOG_NOT_READY', async () => {
    const h = harness({
      script: [
        problem(500, 'INTERNAL'),
        () => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
        problem(503, 'UNAVAILABLE', {}, { 'retry-after': '5' }),
        json(201, order()),
      ],
    });
    await h.client.submit(CART);
    assert.equal(h.calls.length, 4);
    assert.equal(new Set(h.keys()).size, 1);
    assert.deepEqual(h.sleeps, [250, 500, 5000]);

    const c = harness({ script: [problem(503, 'CATALOG_NOT_READY', {}, { 'retry-after': '30' })] });
    await assert.rejects(c.client.submit(CART), { code: 'CATALOG_NOT_READY', status: 503, retryAfter: 30 });
    assert.equal(c.calls.length, 1);
  });

  test('stop once maxElapsedMs would be passed', async () => {
    const h = harness({
      random: () => 1, maxElapsedMs: 2000, maxAttempts: 10,
      script: [networkError(), networkError(), networkError(), json(200, { orders: [] })],
    });
    await assert.rejects(h.client.submit(CART), { code: 'NOT_CONFIRMED' });
    // 500 + 1000 = 1500 elapsed; the next wait (2000) would pass 2000.
    assert.deepEqual(h.sleeps, [500, 1000]);
    assert.equal(h.posts().length, 3);
  });

  test('a Retry-After beyond the budget stops the retries', async () => {
    const h = harness({
      maxElapsedMs: 10000,
      script: [problem(409, 'SESSION_BUSY', {}, { 'retry-after': '60' }), json(200, { orders: [] })],
    });
    await assert.rejects(h.client.submit(CART), { code: 'NOT_CONFIRMED' });
    assert.deepEqual(h.sleeps, []);
    assert.equal(h.posts().length, 1);
  });
});

// ── outcomes without retry ──────────────────────────────────────────────

describe('DUPLICATE_PAYLOAD', () => {
  test('is reported as already placed with the original order', async () => {
    const original = order({ ticketNumber: 41 });
    const h = harness({
      script: [problem(409, 'DUPLICATE_PAYLOAD', { originalOrderId: original.orderId, originalOrder: original })],
    });
    const result = await h.client.submit(CART);
    assert.equal(h.calls.length, 1);
    assert.equal(result.outcome, 'duplicate');
    assert.equal(result.alreadyPlaced, true);
    assert.deepEqual(result.order, original);
    assert.equal(h.client.currentKey, null, 'confirmed: the key is renewed next time');
  });
});

describe('refusals are typed errors, never retried', () => {
  const cases = [
    [422, 'VALIDATION_FAILED', { errors: [{ field: 'items[0].quantity', message: 'too many' }] }],
    [422, 'UNKNOWN_MENU_ITEM', { field: 'items[0].menuItemId' }],
    [422, 'INVALID_TOPPING', { toppingId: CHEESE }],
    [422, 'ITEM_UNAVAILABLE', { menuItemId: BURGER }],
    [409, 'OUT_OF_STOCK', { shortages: [{ itemId: PIE, requested: 3, available: 1 }] }],
    [401, 'PIN_INVALID', {}],
    [429, 'PIN_LOCKED', {}, { 'retry-after': '120' }],
    [429, 'SESSION_RATE_LIMITED', {}, { 'retry-after': '540' }],
    [404, 'NOT_FOUND', {}],
    [400, 'CLIENT_ID_INVALID', {}],
  ];
  for (const [status, code, extra, headers = {}] of cases) {
    test(`${status} ${code}`, async () => {
      const h = harness({ script: [problem(status, code, { detail: `detail of ${code}`, ...extra }, headers)] });
      await assert.rejects(h.client.submit(CART), (err) => {
        assert.ok(err instanceof OrdergateError);
        assert.equal(err.code, code);
        assert.equal(err.status, status);
        assert.equal(err.problem.code, code);
        assert.equal(err.message, `detail of ${code}`);
        for (const [k, v] of Object.entries(extra)) assert.deepEqual(err.problem[k], v);
        return true;
      });
      assert.equal(h.calls.length, 1, 'exactly one request');
      assert.deepEqual(h.sleeps, []);
      assert.equal(h.client.pending, false);
    });
  }

  test('OUT_OF_STOCK exposes shortages; PIN_LOCKED and SESSION_RATE_LIMITED expose retryAfter', async () => {
    const shortages = [{ itemId: PIE, requested: 3, available: 1 }];
    const h = harness({
      script: [
        problem(409, 'OUT_OF_STOCK', { shortages }),
        problem(429, 'PIN_LOCKED', {}, { 'retry-after': '120' }),
        problem(429, 'SESSION_RATE_LIMITED', {}, { 'retry-after': '540' }),
      ],
    });
    await assert.rejects(h.client.submit(CART), { code: 'OUT_OF_STOCK', shortages });
    await assert.rejects(h.client.submit(CART), { code: 'PIN_LOCKED', retryAfter: 120 });
    await assert.rejects(h.client.submit(CART), { code: 'SESSION_RATE_LIMITED', status: 429, retryAfter: 540 });
    assert.equal(new Set(h.keys()).size, 1, 'the key stays for a later try');
  });

  test('410 SESSION_CLOSED to the PIN', async () => {
    const h = harness({ access: [networkError()], script: [problem(410, 'SESSION_CLOSED')] });
    await assert.rejects(h.client.submit(CART), { code: 'SESSION_CLOSED', status: 410 });
    assert.equal(h.calls.length, 1, 'exactly one request');
    assert.equal(h.calls[0].headers['X-Session-PIN'], PIN);
    assert.deepEqual(h.sleeps, []);
  });

  test('a refusal without a problem body gets HTTP_<status>', async () => {
    const h = harness({ script: [() => new Response('nope', { status: 403 })] });
    await assert.rejects(h.client.submit(CART), { code: 'HTTP_403', status: 403, problem: null });
  });
});

// ── reconciliation ──────────────────────────────────────────────────────

describe('when the retries run out', () => {
  const failing = (n) => Array.from({ length: n }, () => networkError());

  test('reconciliation finds the order: reported as placed', async () => {
    const mine = order({ orderId: 'mine', ticketNumber: 12 });
    const h = harness({ maxAttempts: 3, script: failing(3) });
    h.script.push(() => {
      const me = h.client.clientId;
      return json(200, {
        orders: [
          order({ orderId: 'other-device', clientId: 'web-someone-else' }),
          order({ orderId: 'other-cart', clientId: me, note: 'extra spicy' }),
          { ...mine, clientId: me },
        ],
      })();
    });
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'reconciled');
    assert.equal(result.alreadyPlaced, false);
    assert.equal(result.order.orderId, 'mine');
    assert.equal(h.posts().length, 3);
    const get = h.calls[3];
    assert.equal(get.method, 'GET');
    assert.equal(get.url, `${ORDERS_URL}?limit=50`);
    assert.equal(get.headers.Authorization, h.posts()[0].headers.Authorization);
    assert.equal(h.progress.at(-1).phase, 'reconciling');
    assert.equal(h.client.currentKey, null, 'confirmed: the key is renewed next time');
  });

  test('reconciliation does not find it: NOT_CONFIRMED, and the key stays', async () => {
    const h = harness({ maxAttempts: 2, script: [...failing(2), json(200, { orders: [] })] });
    let key;
    await assert.rejects(h.client.submit(CART), (err) => {
      assert.equal(err.code, 'NOT_CONFIRMED');
      assert.equal(err.checked, true);
      assert.equal(err.cause.code, 'NETWORK_ERROR');
      key = h.keys()[0];
      return true;
    });
    assert.equal(h.client.currentKey, key);
    // A later tap retries safely with the same key.
    h.script.push(json(201, order({ idempotentReplay: true })));
    const result = await h.client.submit(CART);
    assert.equal(h.keys().at(-1), key);
    assert.equal(h.posts().length, 3);
    assert.equal(result.outcome, 'replayed');
  });

  test('reconciliation unreachable: NOT_CONFIRMED (not checked)', async () => {
    const h = harness({ maxAttempts: 2, script: [...failing(3)] });
    await assert.rejects(h.client.submit(CART), { code: 'NOT_CONFIRMED', checked: false });
    assert.equal(h.calls.length, 3);
    assert.equal(h.calls[2].method, 'GET');
  });

  test('an order already reported by this client is not taken for the new one', async () => {
    const first = order({ orderId: 'first' });
    const h = harness({ maxAttempts: 1 });
    h.script.push(json(201, { ...first, clientId: h.client.clientId }));
    await h.client.submit(CART, { allowRepeat: false });
    h.script.push(networkError(), json(200, { orders: [{ ...first, clientId: h.client.clientId }] }));
    await assert.rejects(h.client.submit(CART, { allowRepeat: true }), { code: 'NOT_CONFIRMED', checked: true });
  });

  test('an order created before the key (server clock) is not taken', async () => {
    const h = harness({ maxAttempts: 1 });
    const serverSkew = 3_600_000; // the server's clock is an hour ahead
    const date = new Date(T0 + serverSkew).toUTCString();
    // The page loaded the session (learning the server's clock) ...
    h.script.push(json(200, { sessionId: SESSION }, { date }));
    await h.client.getSession();
    // ... then the order failed. The same cart ordered 2 min earlier (server
    // time) does not count; one ordered at the attempt's time does.
    const me = h.client.clientId;
    const old = order({ orderId: 'old', clientId: me, createdAt: new Date(T0 + serverSkew - 120_000).toISOString() });
    h.script.push(networkError(), json(200, { orders: [old] }));
    await assert.rejects(h.client.submit(CART), { code: 'NOT_CONFIRMED', checked: true });
    const fresh = order({ orderId: 'fresh', clientId: me, createdAt: new Date(T0 + serverSkew + 200).toISOString() });
    h.script.push(networkError(), json(200, { orders: [fresh, old] }));
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'reconciled');
    assert.equal(result.order.orderId, 'fresh');
  });

  test('after REQUEST_IN_PROGRESS until the end, it reconciles too', async () => {
    const busy = problem(409, 'REQUEST_IN_PROGRESS', {}, { 'retry-after': '1' });
    const h = harness({ maxAttempts: 3, script: [busy, busy, busy] });
    h.script.push(() => json(200, { orders: [order({ clientId: h.client.clientId })] })());
    const result = await h.client.submit(CART);
    assert.equal(result.outcome, 'reconciled');
    assert.deepEqual(h.sleeps, [1000, 1000]);
  });
});

// ── helpers ─────────────────────────────────────────────────────────────

describe('helpers', () => {
  test('canonicalCart merges, sorts and trims', () => {
    assert.deepEqual(
      canonicalCart({
        items: [
          { menuItemId: PIE, quantity: 1 },
          { menuItemId: BURGER, quantity: 2, toppingIds: [CHEESE, BACON] },
          { menuItemId: BURGER, quantity: 1, toppingIds: [BACON, CHEESE] },
          { menuItemId: BURGER, quantity: 1 },
        ],
        note: '  hi ',
      }, { allowRepeat: true }),
      {
        items: [
          { menuItemId: PIE, quantity: 1, toppingIds: [] },
          { menuItemId: BURGER, quantity: 1, toppingIds: [] },
          { menuItemId: BURGER, quantity: 3, toppingIds: [CHEESE, BACON].sort() },
        ].sort((a, b) => `${a.menuItemId}|${a.toppingIds}`.localeCompare(`${b.menuItemId}|${b.toppingIds}`)),
        note: 'hi',
        allowRepeat: true,
      },
    );
  });

  test('getSession and listOrders read the session with the guest token', async () => {
    const h = harness({ script: [json(200, { sessionId: SESSION, shopId: SHOP }), json(200, { orders: [order()] })] });
    assert.equal((await h.client.getSession()).shopId, SHOP);
    assert.equal((await h.client.listOrders({ limit: 20 })).length, 1);
    assert.equal(h.calls[0].url, SESSION_URL);
    assert.equal(h.calls[1].url, `${ORDERS_URL}?limit=20`);
    for (const c of h.calls) {
      assert.equal(c.headers.Authorization, `Bearer ${h.tokenStorage.map.get(TOKEN_KEY)}`);
      assert.equal(c.headers['X-Session-PIN'], undefined);
    }
  });

  test('getSession with a wrong PIN: typed error', async () => {
    const h = harness({ access: [problem(401, 'PIN_INVALID')] });
    await assert.rejects(h.client.getSession(), { code: 'PIN_INVALID', status: 401 });
  });

  test('menu loader revalidates with If-None-Match', async () => {
    const calls = [];
    const menu = { shopId: SHOP, currency: 'JPY', items: [] };
    const answers = [
      () => new Response(JSON.stringify(menu), { status: 200, headers: { 'content-type': 'application/json', etag: '"abc"' } }),
      () => new Response(null, { status: 304, headers: { etag: '"abc"' } }),
      () => new Response(JSON.stringify({ ...menu, catalogVersion: 2 }), { status: 200, headers: { 'content-type': 'application/json', etag: '"def"' } }),
    ];
    const loader = createMenuLoader({
      shopId: SHOP,
      fetch: async (url, init) => { calls.push({ url, headers: init.headers }); return answers.shift()(); },
    });
    const a = await loader.load();
    assert.equal(a.changed, true);
    assert.deepEqual(a.menu, menu);
    const b = await loader.load();
    assert.equal(b.changed, false);
    assert.deepEqual(b.menu, menu);
    const c = await loader.load();
    assert.equal(c.changed, true);
    assert.equal(c.menu.catalogVersion, 2);
    assert.equal(calls[0].url, `/api/v1/shops/${SHOP}/menu`);
    assert.equal(calls[0].headers['If-None-Match'], undefined);
    assert.equal(calls[1].headers['If-None-Match'], '"abc"');
    assert.equal(calls[2].headers['If-None-Match'], '"abc"');
    assert.equal(loader.etag, '"def"');
  });

  test('menu loader gives a fresh copy each time (also on 304)', async () => {
    const menu = { shopId: SHOP, currency: 'USD', items: [{ menuItemId: PIE, soldOut: false, stock: 3 }] };
    const answers = [
      () => new Response(JSON.stringify(menu), { status: 200, headers: { 'content-type': 'application/json', etag: '"a"' } }),
      () => new Response(null, { status: 304, headers: { etag: '"a"' } }),
    ];
    const loader = createMenuLoader({ shopId: SHOP, fetch: async () => answers.shift()() });
    const first = await loader.load();
    first.menu.items[0].soldOut = true; // the page applied a stock event to its copy
    const second = await loader.load();
    assert.equal(second.changed, false);
    assert.notEqual(second.menu, first.menu);
    assert.equal(second.menu.items[0].soldOut, false, 'the server\'s state, not the page\'s edits');
  });

  test('menu loader: CATALOG_NOT_READY is a typed error', async () => {
    const loader = createMenuLoader({
      shopId: SHOP,
      fetch: async () => problem(503, 'CATALOG_NOT_READY', {}, { 'retry-after': '30' })(),
    });
    await assert.rejects(loader.load(), { code: 'CATALOG_NOT_READY', retryAfter: 30 });
  });

  test('formatMoney uses the currency\'s minor unit', () => {
    assert.equal(formatMoney(1290, 'USD', 'en-US'), '$12.90');
    assert.equal(formatMoney(480, 'JPY', 'en-US'), '¥480');
    assert.equal(formatMoney(480, 'JPY', 'ja-JP'), '￥480');
    assert.equal(formatMoney(5, 'USD', 'en-US'), '$0.05');
    assert.match(formatMoney(1234, 'KWD', 'en-US'), /^KWD\s1\.234$/);
  });

  test('parseRetryAfter takes seconds or an HTTP date', () => {
    assert.equal(parseRetryAfter('3'), 3);
    assert.equal(parseRetryAfter(null), null);
    assert.equal(parseRetryAfter('soon'), null);
    assert.equal(parseRetryAfter(new Date(T0 + 4500).toUTCString(), T0), 4);
  });

  test('uuidV4 makes version 4 UUIDs', () => {
    for (let i = 0; i < 20; i++) assert.match(uuidV4(), UUID_V4);
  });
});

// ── live events ─────────────────────────────────────────────────────────

class FakeEventSource {
  static instances = [];
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.listeners = {};
    this.closed = false;
    FakeEventSource.instances.push(this);
  }
  addEventListener(type, fn) { (this.listeners[type] ??= []).push(fn); }
  emit(type, ev = {}) { for (const fn of this.listeners[type] ?? []) fn(ev); }
  open() { this.readyState = 1; this.emit('open'); }
  close() { this.readyState = 2; this.closed = true; }
}

describe('subscribeSessionEvents', () => {
  test('connects with ?pin=, parses events, reports (re)connections and resumes after a failure', () => {
    FakeEventSource.instances = [];
    const events = [];
    const opens = [];
    const statuses = [];
    const timers = [];
    const sub = subscribeSessionEvents({
      sessionId: SESSION,
      pin: PIN,
      EventSource: FakeEventSource,
      setTimeout: (fn, ms) => { timers.push({ fn, ms }); return timers.length; },
      clearTimeout: () => {},
      random: () => 1,
      onEvent: (type, data, id) => events.push({ type, data, id }),
      onOpen: (info) => opens.push(info),
      onStatus: (s) => statuses.push(s),
    });
    const [es] = FakeEventSource.instances;
    assert.equal(es.url, `/api/v1/sessions/${SESSION}/events?pin=${PIN}`);
    es.open();
    es.emit('stock.changed', { data: JSON.stringify({ itemId: PIE, stock: 0, soldOut: true }), lastEventId: '41' });
    es.emit('order.placed', { data: JSON.stringify(order()), lastEventId: '42' });
    assert.deepEqual(events.map((e) => [e.type, e.id]), [['stock.changed', '41'], ['order.placed', '42']]);
    assert.equal(events[0].data.soldOut, true);
    assert.equal(sub.lastEventId, '42');

    // EventSource's own reconnect (it sends Last-Event-ID itself)
    es.readyState = 0;
    es.emit('error');
    assert.equal(statuses.at(-1), 'reconnecting');
    es.open();
    assert.deepEqual(opens, [{ reconnected: false }, { reconnected: true }]);
    assert.equal(FakeEventSource.instances.length, 1);

    // It gives up (e.g. an HTTP error): a new one resumes with ?lastEventId=
    es.readyState = 2;
    es.emit('error');
    assert.equal(statuses.at(-1), 'offline');
    assert.equal(es.closed, true);
    assert.equal(timers.length, 1);
    assert.equal(timers[0].ms, 1000);
    timers[0].fn();
    const es2 = FakeEventSource.instances[1];
    assert.equal(es2.url, `/api/v1/sessions/${SESSION}/events?pin=${PIN}&lastEventId=42`);
    es2.open();
    assert.deepEqual(opens.at(-1), { reconnected: true });

    sub.close();
    assert.equal(es2.closed, true);
    es2.emit('order.updated', { data: '{}', lastEventId: '43' });
    assert.equal(events.length, 2, 'nothing after close');
  });
});

describe('the client\'s event stream (subscribeEvents)', () => {
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const streamOptions = (log) => ({
    EventSource: FakeEventSource,
    setTimeout: (fn, ms) => { log.timers.push({ fn, ms }); return log.timers.length; },
    clearTimeout: () => {},
    random: () => 1,
    onEvent: (type, data) => log.events.push(type),
    onStatus: (status) => log.statuses.push(status),
    onEnd: (err) => log.ends.push(err),
  });
  const newLog = () => ({ timers: [], events: [], statuses: [], ends: [] });

  test('connects with ?access_token= (the token, not the PIN), after the exchange', async () => {
    FakeEventSource.instances = [];
    const h = harness();
    h.client.subscribeEvents(streamOptions(newLog()));
    await settle();
    const [es] = FakeEventSource.instances;
    const token = h.tokenStorage.map.get(TOKEN_KEY);
    assert.equal(es.url, `/api/v1/sessions/${SESSION}/events?access_token=${token}`);
    assert.ok(!es.url.includes(PIN));
  });

  test('with no token (the exchange is down) it connects with ?pin=', async () => {
    FakeEventSource.instances = [];
    const h = harness({ access: [networkError()] });
    h.client.subscribeEvents(streamOptions(newLog()));
    await settle();
    assert.equal(FakeEventSource.instances[0].url, `/api/v1/sessions/${SESSION}/events?pin=${PIN}`);
  });

  test('the table\'s session.closed ends it for good and drops the token', async () => {
    FakeEventSource.instances = [];
    const log = newLog();
    const h = harness();
    h.client.subscribeEvents(streamOptions(log));
    await settle();
    const [es] = FakeEventSource.instances;
    es.open();
    // Another table's checkout is none of this stream's business.
    es.emit('session.closed', { data: JSON.stringify({ sessionId: 'another-table' }), lastEventId: '8' });
    assert.equal(es.closed, false);
    es.emit('session.closed', { data: JSON.stringify({ sessionId: SESSION, status: 'closed' }), lastEventId: '9' });
    assert.deepEqual(log.events, ['session.closed', 'session.closed'], 'the page gets the event first');
    assert.equal(es.closed, true);
    assert.equal(log.statuses.at(-1), 'closed');
    assert.equal(log.ends.length, 1);
    assert.equal(log.ends[0].code, 'SESSION_CLOSED');
    assert.equal(h.tokenStorage.map.has(TOKEN_KEY), false);
    es.readyState = 2;
    es.emit('error');
    assert.equal(log.timers.length, 0, 'no reconnect is scheduled');
    assert.equal(FakeEventSource.instances.length, 1);
  });

  // Servers answer a token that died at checkout either way.
  for (const [answer, read, access] of [
    ['410', problem(410, 'SESSION_CLOSED'), []],
    ['401, then the exchange 410', problem(401, 'UNAUTHORIZED'), [grant(), problem(410, 'SESSION_CLOSED')]],
  ]) {
    test(`refused after a checkout it missed (the session read: ${answer}): it ends`, async () => {
      FakeEventSource.instances = [];
      const log = newLog();
      const h = harness({ access, script: [read] });
      h.client.subscribeEvents(streamOptions(log));
      await settle();
      const [es] = FakeEventSource.instances;
      es.open();
      es.readyState = 2;
      es.emit('error');
      assert.equal(log.statuses.at(-1), 'offline');
      log.timers[0].fn();
      await settle();
      assert.equal(h.calls[0].url, SESSION_URL);
      assert.equal(log.ends[0]?.code, 'SESSION_CLOSED');
      assert.equal(log.statuses.at(-1), 'closed');
      assert.equal(FakeEventSource.instances.length, 1, 'no new stream');
      assert.equal(log.timers.length, 1, 'and none planned');
    });
  }

  test('a closed session read with the PIN (within the grace) ends it too', async () => {
    FakeEventSource.instances = [];
    const log = newLog();
    const h = harness({ access: [networkError()], script: [json(200, { sessionId: SESSION, status: 'closed' })] });
    h.client.subscribeEvents(streamOptions(log));
    await settle();
    FakeEventSource.instances[0].readyState = 2;
    FakeEventSource.instances[0].emit('error');
    log.timers[0].fn();
    await settle();
    assert.equal(h.calls[0].headers['X-Session-PIN'], PIN);
    assert.equal(h.script.length, 0, 'the session was read');
    assert.equal(log.ends[0]?.code, 'SESSION_CLOSED');
    assert.equal(FakeEventSource.instances.length, 1);
  });

  test('refused for its token (401): a new token, and it resumes with it', async () => {
    FakeEventSource.instances = [];
    const log = newLog();
    const h = harness({ script: [problem(401, 'UNAUTHORIZED'), json(200, { sessionId: SESSION, status: 'active' })] });
    h.client.subscribeEvents(streamOptions(log));
    await settle();
    const [es] = FakeEventSource.instances;
    const old = h.tokenStorage.map.get(TOKEN_KEY);
    es.open();
    es.emit('order.placed', { data: JSON.stringify(order()), lastEventId: '42' });
    es.readyState = 2;
    es.emit('error');
    log.timers[0].fn();
    await settle();
    const fresh = h.tokenStorage.map.get(TOKEN_KEY);
    assert.notEqual(fresh, old);
    const es2 = FakeEventSource.instances[1];
    assert.equal(es2.url, `/api/v1/sessions/${SESSION}/events?access_token=${fresh}&lastEventId=42`);
    assert.deepEqual(log.ends, []);
  });

  test('a network failure is no ending: it tries again later', async () => {
    FakeEventSource.instances = [];
    const log = newLog();
    const h = harness({ script: [networkError(), json(200, { sessionId: SESSION, status: 'active' })] });
    h.client.subscribeEvents(streamOptions(log));
    await settle();
    FakeEventSource.instances[0].readyState = 2;
    FakeEventSource.instances[0].emit('error');
    log.timers[0].fn();
    await settle();
    assert.equal(FakeEventSource.instances.length, 1, 'the session could not be read: no stream yet');
    assert.equal(log.timers.length, 2);
    assert.equal(log.timers[1].ms, 2000, 'backing off');
    log.timers[1].fn();
    await settle();
    assert.equal(FakeEventSource.instances.length, 2);
    assert.deepEqual(log.ends, []);
  });
});

// ── option groups and line notes ────────────────────────────────────────

describe('options and line notes', () => {
  const STEAK = '0b6f1f3c-52f5-4f0e-9d3e-3b8e1c2a7a10';
  const RARE = '7a3c2e61-1d0b-4c5e-8f3a-111111111111';
  const MEDIUM = '7a3c2e61-1d0b-4c5e-8f3a-222222222222';
  const FRIES = '7a3c2e61-1d0b-4c5e-8f3a-333333333333';
  const SALAD = '7a3c2e61-1d0b-4c5e-8f3a-444444444444';
  const DONENESS = '9e0c4a52-0000-4000-8000-000000000001';
  const SIDES = '9e0c4a52-0000-4000-8000-000000000002';
  const steak = (optionIds, extra = {}) => ({ menuItemId: STEAK, quantity: 1, optionIds, ...extra });

  function steakOrder({ options, note, quantity = 1, orderNote = '' } = {}) {
    const line = { menuItemId: STEAK, name: 'Steak', unitPrice: 2100, quantity, toppings: [], lineTotal: 2100 * quantity };
    if (options) line.options = options;
    if (note) line.note = note;
    return order({ items: [line], note: orderNote, total: line.lineTotal });
  }

  test('the body carries optionIds and the trimmed line note; lines without them are sent as before', async () => {
    const h = harness({ script: [json(201, order())] });
    await h.client.submit({
      items: [
        steak([MEDIUM, FRIES], { note: '  no salt  ' }),
        { menuItemId: PIE, quantity: 2, toppingIds: [], optionIds: [], note: '   ' },
        { menuItemId: BURGER, quantity: 1, toppingIds: [CHEESE] },
      ],
      note: 'window table',
    });
    assert.deepEqual(h.calls[0].body, {
      items: [
        { menuItemId: STEAK, quantity: 1, toppingIds: [], optionIds: [MEDIUM, FRIES], note: 'no salt' },
        { menuItemId: PIE, quantity: 2, toppingIds: [] },
        { menuItemId: BURGER, quantity: 1, toppingIds: [CHEESE] },
      ],
      note: 'window table',
      allowRepeat: false,
    });
  });

  test('canonicalCart sorts and deduplicates options, trims line notes, and keeps different choices apart', () => {
    const cart = canonicalCart({
      items: [
        steak([MEDIUM, FRIES]),
        steak([FRIES, MEDIUM, FRIES]),
        steak([RARE]),
        steak([MEDIUM, FRIES], { note: ' no salt ' }),
        steak([MEDIUM, FRIES], { note: 'no salt' }),
        steak([RARE], { note: '   ' }),
        { menuItemId: PIE, quantity: 1 },
      ],
    });
    const pie = { menuItemId: PIE, quantity: 1, toppingIds: [] };
    const byLine = (l) => JSON.stringify([l.optionIds ?? [], l.note ?? '']);
    const steaks = cart.items.filter((l) => l.menuItemId === STEAK);
    assert.deepEqual(cart.items.find((l) => l.menuItemId === PIE), pie, 'no optionIds or note on a plain line');
    assert.equal(steaks.length, 3, 'rare, medium + fries, medium + fries with a note');
    assert.deepEqual(
      Object.fromEntries(steaks.map((l) => [byLine(l), l.quantity])),
      {
        [JSON.stringify([[RARE], ''])]: 2,
        [JSON.stringify([[FRIES, MEDIUM].sort(), ''])]: 2,
        [JSON.stringify([[FRIES, MEDIUM].sort(), 'no salt'])]: 2,
      },
    );
    for (const l of steaks) {
      assert.deepEqual(l.optionIds, [...l.optionIds].sort());
      assert.equal('note' in l, l.note !== undefined && l.note !== '');
    }
  });

  test('canonicalCart does not depend on the order of lines or options', () => {
    const a = canonicalCart({ items: [steak([RARE]), steak([FRIES, MEDIUM], { note: 'x' }), { menuItemId: PIE, quantity: 1 }] });
    const b = canonicalCart({ items: [{ menuItemId: PIE, quantity: 1 }, steak([MEDIUM, FRIES], { note: 'x ' }), steak([RARE])] });
    assert.deepEqual(a, b);
  });

  test('a cart without options reads as it always did (stored keys stay valid)', () => {
    assert.deepEqual(canonicalCart(CART), {
      items: [{ menuItemId: BURGER, quantity: 2, toppingIds: [BACON, CHEESE].sort() }],
      note: 'no onions',
      allowRepeat: false,
    });
  });

  test('the key: the same for the same choices in any order, another for another doneness or note', () => {
    const h = harness();
    const k1 = h.client.keyFor({ items: [steak([MEDIUM, FRIES])] });
    assert.equal(h.client.keyFor({ items: [steak([FRIES, MEDIUM])] }), k1);
    const k2 = h.client.keyFor({ items: [steak([RARE, FRIES])] });
    assert.notEqual(k2, k1, 'another doneness is another request');
    const k3 = h.client.keyFor({ items: [steak([RARE, FRIES], { note: 'no salt' })] });
    assert.notEqual(k3, k2, 'a line note makes another request');
    assert.equal(h.client.keyFor({ items: [steak([RARE, FRIES], { note: ' no salt ' })] }), k3, 'trimmed');
  });

  test('canonicalOrderCart reads options and line notes from a placed order', () => {
    const placed = steakOrder({
      quantity: 2,
      note: 'no salt',
      options: [
        { optionId: MEDIUM, groupId: DONENESS, name: 'Medium', price: 100 },
        { optionId: FRIES, groupId: SIDES, name: 'Fries', price: 0 },
      ],
    });
    assert.deepEqual(
      canonicalOrderCart(placed),
      canonicalCart({ items: [{ ...steak([FRIES, MEDIUM], { note: 'no salt' }), quantity: 2 }] }),
    );
    // A placed line with no options and no note has neither.
    assert.deepEqual(canonicalOrderCart(steakOrder()).items, [{ menuItemId: STEAK, quantity: 1, toppingIds: [] }]);
  });

  test('reconciliation matches the order with the same options and note, not another doneness', async () => {
    const options = (id) => [{ optionId: id, groupId: DONENESS, name: 'x', price: 0 }];
    const h = harness({ maxAttempts: 2, script: [networkError(), networkError()] });
    h.script.push(() => {
      const me = h.client.clientId;
      return json(200, {
        orders: [
          { ...steakOrder({ options: options(RARE), note: 'no salt' }), orderId: 'rare', clientId: me },
          { ...steakOrder({ options: options(MEDIUM) }), orderId: 'no-note', clientId: me },
          { ...steakOrder({ options: options(MEDIUM), note: 'no salt' }), orderId: 'mine', clientId: me },
        ],
      })();
    });
    const result = await h.client.submit({ items: [steak([MEDIUM], { note: 'no salt' })] });
    assert.equal(result.outcome, 'reconciled');
    assert.equal(result.order.orderId, 'mine');
  });

  test('lines the server would refuse are refused without a request', async () => {
    const h = harness();
    const many = Array.from({ length: 51 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const [line, reason] of [
      [steak(many), 'options'],
      [steak([RARE, RARE]), 'options'],
      [steak('not a list'), 'options'],
      [steak([RARE], { note: 'x'.repeat(141) }), 'line-note'],
      [steak([RARE], { note: 'rare\nplease' }), 'line-note'],
      [steak([RARE], { note: 'no\u200bsalt' }), 'line-note'],
    ]) {
      await assert.rejects(h.client.submit({ items: [{ menuItemId: PIE, quantity: 1 }, line] }), (err) => {
        assert.equal(err.code, 'INVALID_CART');
        assert.equal(err.reason, reason);
        assert.equal(err.line, 1);
        return true;
      });
    }
    assert.equal(h.calls.length, 0);
    // 50 options and 140 characters (emoji count as one each) are fine.
    const ok = harness({ script: [json(201, order())] });
    await ok.client.submit({ items: [steak(many.slice(0, 50), { note: `${'🔥'.repeat(70)}${'x'.repeat(70)}` })] });
    assert.equal(ok.calls[0].body.items[0].optionIds.length, 50);
  });

  test('lineNoteProblem says why a note cannot be sent', () => {
    assert.equal(lineNoteProblem('no salt'), null);
    assert.equal(lineNoteProblem(''), null);
    assert.equal(lineNoteProblem(`  ${'a'.repeat(140)}  `), null, 'trimmed before counting');
    assert.equal(lineNoteProblem('a'.repeat(141)), 'too-long');
    assert.equal(lineNoteProblem('one\ntwo'), 'line-break');
    assert.equal(lineNoteProblem('one\u2028two'), 'line-break');
    assert.equal(lineNoteProblem('bidi \u202e override'), 'invisible');
    assert.equal(lineNoteProblem('family 👨\u200d👩\u200d👧'), 'invisible', 'joined emoji are refused by the server too');
    assert.equal(lineNoteProblem('mild 🌶️'), null, 'a variation selector is fine');
  });

  test('422 INVALID_OPTIONS is final, with its errors', async () => {
    const errors = [{ field: 'items[0].optionIds', groupId: DONENESS, message: 'choose one Doneness' }];
    const h = harness({ script: [problem(422, 'INVALID_OPTIONS', { detail: 'choose one Doneness', errors })] });
    await assert.rejects(h.client.submit({ items: [steak([])] }), (err) => {
      assert.equal(err.code, 'INVALID_OPTIONS');
      assert.equal(err.status, 422);
      assert.equal(err.message, 'choose one Doneness');
      assert.deepEqual(err.errors, errors);
      return true;
    });
    assert.equal(h.calls.length, 1, 'not retried');
    assert.deepEqual(h.sleeps, []);
    assert.equal(h.client.pending, false);
  });
});

describe('menu languages and money', () => {
  const menuAnswer = (body, etag) => () => new Response(JSON.stringify(body), {
    status: 200, headers: { 'content-type': 'application/json', etag },
  });

  test('the menu is asked for with ?lang=, and a new language starts without the old ETag', async () => {
    const calls = [];
    const answers = [
      menuAnswer({ shopId: SHOP, language: 'ja', items: [] }, '"ja1"'),
      () => new Response(null, { status: 304, headers: { etag: '"ja1"' } }),
      menuAnswer({ shopId: SHOP, language: 'en', items: [] }, '"en1"'),
    ];
    const loader = createMenuLoader({
      shopId: SHOP,
      lang: 'ja',
      fetch: async (url, init) => { calls.push({ url, headers: init.headers }); return answers.shift()(); },
    });
    assert.equal(loader.language, 'ja');
    assert.equal((await loader.load()).menu.language, 'ja');
    assert.equal((await loader.load()).changed, false);
    loader.setLanguage('en');
    const en = await loader.load();
    assert.equal(en.changed, true);
    assert.equal(en.menu.language, 'en');
    assert.deepEqual(calls.map((c) => c.url), [
      `/api/v1/shops/${SHOP}/menu?lang=ja`,
      `/api/v1/shops/${SHOP}/menu?lang=ja`,
      `/api/v1/shops/${SHOP}/menu?lang=en`,
    ]);
    assert.equal(calls[1].headers['If-None-Match'], '"ja1"');
    assert.equal(calls[2].headers['If-None-Match'], undefined, 'the Japanese ETag is not sent for English');
  });

  test('a language change during a load asks again in the new language', async () => {
    const urls = [];
    let loader;
    const answers = [
      () => { loader.setLanguage('en'); return menuAnswer({ language: 'ja', items: [] }, '"ja"')(); },
      menuAnswer({ language: 'en', items: [] }, '"en"'),
    ];
    loader = createMenuLoader({ shopId: SHOP, lang: 'ja', fetch: async (url) => { urls.push(url); return answers.shift()(); } });
    const { menu } = await loader.load();
    assert.equal(menu.language, 'en');
    assert.equal(urls.length, 2);
    assert.match(urls[1], /\?lang=en$/);
  });

  test('formatMoney in the page\'s language: yen without decimals, an unusable tag falls back', () => {
    assert.equal(formatMoney(2100, 'JPY', 'ja'), '￥2,100');
    assert.equal(formatMoney(2100, 'JPY', 'en'), '¥2,100');
    assert.equal(formatMoney(1290, 'USD', 'ja'), '$12.90');
    assert.match(formatMoney(2100, 'JPY', 'not a tag!'), /2,100/);
  });
});

// ── the floor: service requests, table cards, the kitchen's pace ────────

describe('callStaff', () => {
  const SERVICE_URL = `/api/v1/sessions/${SESSION}/service-requests`;
  const serviceRequest = (overrides = {}) => ({
    requestId: '01a23152-e3e6-708b-b4e7-fa38ed428cf3',
    shopId: SHOP,
    sessionId: SESSION,
    tableLabel: 'T1',
    kind: 'call',
    status: 'open',
    createdAt: new Date(T0).toISOString(),
    acknowledgedAt: null,
    ...overrides,
  });

  test('one POST with the kind, a key and the guest token (never the PIN)', async () => {
    const h = harness({ script: [json(201, serviceRequest())] });
    const result = await h.client.callStaff('call');
    assert.equal(h.calls.length, 1);
    const [c] = h.calls;
    assert.equal(c.method, 'POST');
    assert.equal(c.url, SERVICE_URL);
    assert.deepEqual(c.body, { kind: 'call' });
    assert.match(c.headers['Idempotency-Key'], UUID_V4);
    assert.equal(c.headers.Authorization, `Bearer ${h.tokenStorage.map.get(TOKEN_KEY)}`);
    assert.equal(c.headers['X-Session-PIN'], undefined);
    assert.equal(c.headers['Content-Type'], 'application/json');
    assert.deepEqual(result, {
      request: serviceRequest(), alreadyOpen: false, replayed: false, attempts: 1, idempotencyKey: c.headers['Idempotency-Key'],
    });
  });

  test('a double tap sends once: the second call joins the first', async () => {
    const h = harness({ script: [json(201, serviceRequest())] });
    const a = h.client.callStaff('call');
    const b = h.client.callStaff('call');
    assert.equal(a, b, 'the same promise');
    await a;
    assert.equal(h.calls.length, 1);
  });

  test('the call and the bill are separate requests, each with its own key', async () => {
    const h = harness({ script: [json(201, serviceRequest()), json(201, serviceRequest({ kind: 'bill', requestId: 'r-bill' }))] });
    const [call, bill] = await Promise.all([h.client.callStaff('call'), h.client.callStaff('bill')]);
    assert.equal(call.request.kind, 'call');
    assert.equal(bill.request.kind, 'bill');
    assert.deepEqual(h.calls.map((c) => c.body.kind).sort(), ['bill', 'call']);
    assert.equal(new Set(h.keys()).size, 2);
  });

  test('200 is the request of that kind already open; a replay says so', async () => {
    const h = harness({
      script: [
        json(200, serviceRequest()),
        json(200, serviceRequest(), { 'idempotent-replayed': 'true' }),
      ],
    });
    const open = await h.client.callStaff('call');
    assert.equal(open.alreadyOpen, true);
    assert.equal(open.replayed, false);
    const replay = await h.client.callStaff('call');
    assert.equal(replay.replayed, true);
    assert.equal(replay.alreadyOpen, false);
  });

  test('retried with the same key after a lost answer, a 5xx or REQUEST_IN_PROGRESS', async () => {
    const h = harness({
      script: [
        networkError(),
        problem(503, 'UNAVAILABLE'),
        problem(409, 'REQUEST_IN_PROGRESS', {}, { 'retry-after': '1' }),
        json(200, serviceRequest(), { 'idempotent-replayed': 'true' }),
      ],
    });
    const result = await h.client.callStaff('call');
    assert.equal(h.calls.length, 4);
    assert.equal(new Set(h.keys()).size, 1, 'one key through every retry');
    assert.equal(result.attempts, 4);
    assert.equal(result.replayed, true);
    assert.equal(h.sleeps.length, 3);
    assert.ok(h.sleeps[2] >= 1000, 'Retry-After is honoured');
  });

  test('a confirmed request frees the key: the next call of that kind is a new request', async () => {
    const h = harness({ script: [json(201, serviceRequest()), json(201, serviceRequest({ requestId: 'r2' }))] });
    await h.client.callStaff('call');
    await h.client.callStaff('call');
    assert.equal(new Set(h.keys()).size, 2);
  });

  test('retries that run out throw the last error and keep the key for the next tap', async () => {
    const h = harness({
      maxAttempts: 3,
      script: [networkError(), networkError(), networkError(), json(201, serviceRequest())],
    });
    await assert.rejects(h.client.callStaff('call'), { code: 'NETWORK_ERROR' });
    assert.equal(h.calls.length, 3);
    await h.client.callStaff('call');
    assert.equal(new Set(h.keys()).size, 1, 'the tap again carries the same key');
  });

  for (const [status, code, headers] of [
    [410, 'SESSION_CLOSED', {}],
    [429, 'PIN_LOCKED', { 'retry-after': '60' }],
    [400, 'MALFORMED_REQUEST', {}],
  ]) {
    test(`${status} ${code} is thrown at once`, async () => {
      const h = harness({ script: [problem(status, code, {}, headers)] });
      await assert.rejects(h.client.callStaff('bill'), { code, status });
      assert.equal(h.calls.length, 1);
      assert.deepEqual(h.sleeps, []);
    });
  }

  test('SESSION_CLOSED to the token drops it (tokens die at checkout)', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_kept' });
    const h = harness({ tokenStorage, script: [problem(410, 'SESSION_CLOSED')] });
    await assert.rejects(h.client.callStaff('call'), { code: 'SESSION_CLOSED' });
    assert.equal(tokenStorage.map.has(TOKEN_KEY), false);
  });

  test('a token refused 401 is traded in once, and the same key sent again', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_old' });
    const h = harness({ tokenStorage, script: [problem(401, 'UNAUTHORIZED'), json(201, serviceRequest())] });
    await h.client.callStaff('call');
    assert.equal(h.exchanges.length, 1);
    assert.equal(h.calls[0].headers.Authorization, 'Bearer og_guest_old');
    assert.equal(h.calls[1].headers.Authorization, `Bearer ${tokenStorage.map.get(TOKEN_KEY)}`);
    assert.equal(new Set(h.keys()).size, 1);
  });

  test('without a PIN, a refused token ends the access (ACCESS_ENDED)', async () => {
    const tokenStorage = memoryStorage({ [TOKEN_KEY]: 'og_guest_dead' });
    const h = harness({ tokenStorage, pin: undefined, script: [problem(401, 'UNAUTHORIZED')] });
    await assert.rejects(h.client.callStaff('call'), { code: 'ACCESS_ENDED' });
    assert.equal(h.calls.length, 1);
    assert.equal(h.exchanges.length, 0);
  });

  test('a wrong PIN refused at the exchange is the answer; nothing is sent', async () => {
    const h = harness({ access: [problem(401, 'PIN_INVALID')] });
    await assert.rejects(h.client.callStaff('call'), { code: 'PIN_INVALID' });
    assert.equal(h.calls.length, 0);
  });

  test('an unknown kind is refused without a request', async () => {
    const h = harness();
    await assert.rejects(h.client.callStaff('water'), { name: 'OrdergateError', code: 'INVALID_KIND' });
    assert.equal(h.calls.length + h.exchanges.length, 0);
    assert.deepEqual([...SERVICE_KINDS], ['call', 'bill']);
  });

  test('the table\'s stream listens for service events', () => {
    assert.ok(GUEST_EVENT_TYPES.includes('service.requested'));
    assert.ok(GUEST_EVENT_TYPES.includes('service.acknowledged'));
    FakeEventSource.instances = [];
    const events = [];
    const sub = subscribeSessionEvents({
      sessionId: SESSION, pin: PIN, EventSource: FakeEventSource, onEvent: (type, data) => events.push([type, data.status]),
    });
    const [es] = FakeEventSource.instances;
    es.open();
    es.emit('service.acknowledged', { data: JSON.stringify(serviceRequest({ status: 'acknowledged' })), lastEventId: '9' });
    assert.deepEqual(events, [['service.acknowledged', 'acknowledged']]);
    sub.close();
  });
});

describe('getTable and getWait', () => {
  const CODE = '418731b99654cf5db630';

  test('getTable reads the card, without credentials and never from a cache', async () => {
    const calls = [];
    const table = { shopId: SHOP, tableName: 'T4', sessionId: null };
    const body = await getTable({
      code: CODE,
      fetch: async (url, init) => { calls.push({ url, init }); return json(200, table)(); },
    });
    assert.deepEqual(body, table);
    assert.equal(calls[0].url, `/api/v1/tables/${CODE}`);
    assert.equal(calls[0].init.cache, 'no-store');
    assert.equal(calls[0].init.headers.Authorization, undefined);
    assert.equal(calls[0].init.headers['X-Session-PIN'], undefined);
  });

  test('an unknown card is NOT_FOUND; no answer is NETWORK_ERROR', async () => {
    await assert.rejects(getTable({ code: CODE, fetch: async () => problem(404, 'NOT_FOUND')() }), { code: 'NOT_FOUND', status: 404 });
    await assert.rejects(getTable({ code: CODE, fetch: networkError() }), { code: 'NETWORK_ERROR' });
    await assert.rejects(getTable({}), TypeError);
  });

  test('getWait reads the shop\'s estimate (null: none yet)', async () => {
    const urls = [];
    const wait = await getWait({
      shopId: SHOP,
      baseUrl: 'https://diner.example/',
      fetch: async (url) => { urls.push(url); return json(200, { estimatedMinutes: null, sampleSize: 2, windowMinutes: 60 })(); },
    });
    assert.equal(wait.estimatedMinutes, null);
    assert.deepEqual(urls, [`https://diner.example/api/v1/shops/${SHOP}/wait`]);
    await assert.rejects(getWait({ shopId: SHOP, fetch: async () => problem(404, 'NOT_FOUND')() }), { code: 'NOT_FOUND' });
  });
});

test('times compare as instants, whatever their fraction digits', () => {
  // The server leaves the fraction out on the exact second.
  const times = ['2026-12-01T16:52:38.120Z', '2026-12-01T16:52:38Z', '2026-12-01T16:52:38.5Z', '2026-12-01T16:52:37.999Z'];
  assert.deepEqual([...times].sort(compareInstants), [
    '2026-12-01T16:52:37.999Z',
    '2026-12-01T16:52:38Z',
    '2026-12-01T16:52:38.120Z',
    '2026-12-01T16:52:38.5Z',
  ]);
  assert.equal([...times].sort().at(-1), '2026-12-01T16:52:38Z', 'as strings, the exact second sorts last');
});
