// Unit tests of the guest page's floor parts that need no DOM: the table
// card's PIN field (guest-table.js), what the page keeps of service
// requests (guest-service.js), how often the wait is read (guest-wait.js),
// and the texts these modules name, in every language.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';

import { normalizePin } from '../guest-table.js';
import { settle, current, ACK_SHOWN_MS } from '../guest-service.js';
import { createThrottle, WAIT_GAP_MS } from '../guest-wait.js';
import { SERVICE_KINDS } from '../order-sdk.js';
import { MESSAGE_LANGUAGES } from '../i18n.js';

const T0 = Date.parse('2026-12-01T12:00:00Z');

describe('the table card\'s PIN field', () => {
  test('keeps digits only, at most six', () => {
    assert.equal(normalizePin('123456'), '123456');
    assert.equal(normalizePin(' 123 456 '), '123456');
    assert.equal(normalizePin('123-4567'), '123456');
    assert.equal(normalizePin('abc'), '');
    assert.equal(normalizePin(null), '');
  });

  test('full-width digits from a Japanese keyboard count as digits', () => {
    assert.equal(normalizePin('１２３４５６'), '123456');
    assert.equal(normalizePin('０１2３'), '0123');
  });
});

describe('service requests as the page keeps them', () => {
  const request = (overrides = {}) => ({
    requestId: 'r1', kind: 'call', status: 'open', createdAt: '2026-12-01T12:00:00.000Z', sessionId: 's', ...overrides,
  });

  test('the first news of a request is kept, with when this phone learnt it', () => {
    assert.deepEqual(settle(null, request(), T0), {
      requestId: 'r1', kind: 'call', status: 'open', createdAt: '2026-12-01T12:00:00.000Z', seenAt: T0,
    });
  });

  test('acknowledged after open; a late "requested" does not make it open again', () => {
    const open = settle(null, request(), T0);
    const acked = settle(open, request({ status: 'acknowledged' }), T0 + 1000);
    assert.equal(acked.status, 'acknowledged');
    assert.equal(acked.seenAt, T0 + 1000);
    assert.equal(settle(acked, request(), T0 + 2000), acked);
  });

  test('a newer request of the kind replaces one staff acknowledged; news of an older one is ignored', () => {
    const acked = settle(null, request({ status: 'acknowledged' }), T0);
    const next = settle(acked, request({ requestId: 'r2', createdAt: '2026-12-01T12:05:00.000Z' }), T0 + 5000);
    assert.equal(next.requestId, 'r2');
    assert.equal(next.status, 'open');
    assert.equal(settle(next, request({ status: 'acknowledged' }), T0 + 6000), next, 'the old one\'s ack');
  });

  test('something that is not a request of a known kind changes nothing', () => {
    const known = settle(null, request(), T0);
    assert.equal(settle(known, { kind: 'call' }, T0), known);
    assert.equal(settle(known, request({ kind: 'water', requestId: 'r9' }), T0), known);
  });

  test('"on the way" is dropped once ACK_SHOWN_MS have passed; open requests stay', () => {
    const records = {
      call: settle(null, request({ status: 'acknowledged' }), T0),
      bill: settle(null, request({ kind: 'bill', requestId: 'b1' }), T0),
    };
    assert.deepEqual(Object.keys(current(records, T0 + ACK_SHOWN_MS - 1)).sort(), ['bill', 'call']);
    assert.deepEqual(Object.keys(current(records, T0 + ACK_SHOWN_MS)), ['bill']);
  });

  test('a damaged stored entry is dropped', () => {
    assert.deepEqual(current(null, T0), {});
    assert.deepEqual(current({ call: { kind: 'bill', requestId: 'x' }, bill: 'nonsense' }, T0), {});
  });
});

describe('reading the wait at most once per gap', () => {
  function clock() {
    const c = { now: T0, timers: [] };
    c.setTimer = (fn, ms) => { const timer = { fn, at: c.now + ms }; c.timers.push(timer); return timer; };
    c.clearTimer = (timer) => { c.timers = c.timers.filter((x) => x !== timer); };
    c.advance = async (ms) => {
      c.now += ms;
      for (const timer of c.timers.filter((x) => x.at <= c.now)) {
        c.clearTimer(timer);
        timer.fn();
      }
      await new Promise((r) => setImmediate(r));
    };
    return c;
  }

  test('the first request reads at once; requests within the gap merge into one read at its end', async () => {
    const c = clock();
    let reads = 0;
    const request = createThrottle(async () => { reads += 1; }, WAIT_GAP_MS, { now: () => c.now, setTimer: c.setTimer, clearTimer: c.clearTimer });
    request();
    await c.advance(0);
    assert.equal(reads, 1);
    for (let i = 0; i < 5; i++) request();
    await c.advance(WAIT_GAP_MS - 1);
    assert.equal(reads, 1, 'nothing before the gap has passed');
    await c.advance(1);
    assert.equal(reads, 2, 'one read for all of them');
    await c.advance(WAIT_GAP_MS * 3);
    assert.equal(reads, 2, 'and nothing more without a request');
  });

  test('a request while a read runs makes one more read after it, a gap later', async () => {
    const c = clock();
    let finish;
    let reads = 0;
    const request = createThrottle(() => { reads += 1; return new Promise((r) => { finish = r; }); }, WAIT_GAP_MS,
      { now: () => c.now, setTimer: c.setTimer, clearTimer: c.clearTimer });
    request();
    request();
    await c.advance(1000);
    finish();
    await c.advance(0);
    assert.equal(reads, 1);
    await c.advance(WAIT_GAP_MS);
    assert.equal(reads, 2);
  });

  test('a failed read does not stop the next ones; cancel drops a waiting read', async () => {
    const c = clock();
    let reads = 0;
    const request = createThrottle(async () => { reads += 1; throw new Error('down'); }, WAIT_GAP_MS,
      { now: () => c.now, setTimer: c.setTimer, clearTimer: c.clearTimer });
    request();
    await c.advance(0);
    request();
    await c.advance(WAIT_GAP_MS);
    assert.equal(reads, 2);
    request();
    request.cancel();
    await c.advance(WAIT_GAP_MS);
    assert.equal(reads, 2);
  });

  test('the gap outlasts the server\'s max-age=30, so a read is never the browser\'s cached copy', () => {
    assert.ok(WAIT_GAP_MS > 30_000);
  });
});

describe('the floor\'s texts', () => {
  const files = ['guest-table.js', 'guest-service.js', 'guest-wait.js'];
  // Keys these modules build from the request's kind and state.
  const built = SERVICE_KINDS.flatMap((kind) =>
    ['open', 'openSince', 'acknowledged', 'already', 'failed'].map((state) => `service.${kind}.${state}`))
    .concat(['service.badge.open', 'service.badge.acknowledged']);

  for (const lang of MESSAGE_LANGUAGES) {
    test(`${lang}.json has every text the floor modules name`, async () => {
      const messages = JSON.parse(await readFile(new URL(`../i18n/${lang}.json`, import.meta.url), 'utf8'));
      const keys = new Set(built);
      for (const file of files) {
        const code = await readFile(new URL(`../${file}`, import.meta.url), 'utf8');
        for (const [, key] of code.matchAll(/\bt\('([a-zA-Z0-9_.-]+)'/g)) keys.add(key);
        for (const [, key] of code.matchAll(/\bkey: '([a-zA-Z0-9_.-]+)'/g)) keys.add(key);
      }
      assert.ok(keys.size > 20);
      for (const key of keys) assert.ok(key in messages, `${lang}.json: ${key}`);
    });
  }
});
