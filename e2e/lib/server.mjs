// The real ordergate server for the browser tests: `ordergate serve` on port
// 0 with a fresh SQLite database in a temporary folder, a random staff token,
// and a small API client to set up shops, catalogs and tables and to check
// what the pages did. Every call has a deadline.

import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The server binary: $ORDERGATE_BIN, or the workspace's debug build. */
export const SERVER_BIN = process.env.ORDERGATE_BIN
  ? resolve(process.env.ORDERGATE_BIN)
  : resolve(E2E_DIR, '../target/debug/ordergate');

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
const LOG_LINES_KEPT = 400;

/**
 * Starts `ordergate serve` and resolves once it prints `listening on …`.
 * `args` adds flags (e.g. ['--client-cooldown-ms', '0']).
 */
export async function startServer({ args = [] } = {}) {
  if (!existsSync(SERVER_BIN)) {
    throw new Error(`no server binary at ${SERVER_BIN}: run \`cargo build -p ordergate\` or set ORDERGATE_BIN`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'ordergate-e2e-'));
  const token = randomBytes(16).toString('hex');
  const child = spawn(
    SERVER_BIN,
    ['serve', '--listen', '127.0.0.1:0', '--database', `sqlite://${join(dir, 'ordergate.db')}`, ...args],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ORDERGATE_STAFF_TOKEN: token, RUST_LOG: process.env.RUST_LOG || 'info' },
    },
  );
  const log = [];
  const keep = (stream) => (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (!line) continue;
      log.push(`${stream}: ${line}`);
      if (log.length > LOG_LINES_KEPT) log.shift();
    }
  };
  child.stderr.on('data', keep('stderr'));
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
  // Whatever happens to this test process, the server goes with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  let stdout = '';
  let startTimer;
  try {
    const baseUrl = await new Promise((resolveUrl, reject) => {
      startTimer = setTimeout(
        () => reject(new Error(`the server did not say "listening on" within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk) => {
        keep('stdout')(chunk);
        stdout += chunk;
        const m = /listening on (http:\/\/\S+)/.exec(stdout);
        if (m) resolveUrl(m[1].replace(/\/$/, ''));
      });
      child.once('error', reject);
      exited.then(({ code, signal }) =>
        reject(new Error(`the server exited at start (code ${code}, signal ${signal})`)),
      );
    });
    clearTimeout(startTimer);
    return new Server({ child, dir, token, baseUrl, log, exited, killOnExit });
  } catch (err) {
    clearTimeout(startTimer);
    child.kill('SIGKILL');
    process.removeListener('exit', killOnExit);
    await rm(dir, { recursive: true, force: true });
    err.message += `\n--- server log ---\n${log.join('\n')}`;
    throw err;
  }
}

export class Server {
  constructor({ child, dir, token, baseUrl, log, exited, killOnExit }) {
    this.child = child;
    this.dir = dir;
    this.token = token;
    this.baseUrl = baseUrl;
    this.log = log;
    this.exited = exited;
    this.killOnExit = killOnExit;
  }

  /** The last lines the server logged (for failure reports). */
  logTail(lines = 60) {
    return this.log.slice(-lines).join('\n');
  }

  /** SIGTERM (graceful shutdown), SIGKILL if it takes too long, then cleanup. */
  async stop() {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', this.killOnExit);
    await rm(this.dir, { recursive: true, force: true });
  }

  url(path) {
    return `${this.baseUrl}${path}`;
  }

  /**
   * One HTTP call. `auth`: 'staff' (bearer token), a {pin, clientId} object
   * (guest headers), or null. Resolves to {status, headers, body}.
   */
  async request(method, path, { body, auth = 'staff', headers = {} } = {}) {
    const h = { Accept: 'application/json', ...headers };
    if (auth === 'staff') h.Authorization = `Bearer ${this.token}`;
    else if (auth && auth.pin) {
      h['X-Session-PIN'] = auth.pin;
      if (auth.clientId) h['X-Client-Id'] = auth.clientId;
    }
    if (body !== undefined) h['Content-Type'] = 'application/json';
    const res = await fetch(this.url(path), {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  /** Like request, but throws unless the status is `expect`. Resolves to the body. */
  async call(method, path, { expect = 200, ...options } = {}) {
    const res = await this.request(method, path, options);
    if (res.status !== expect) {
      throw new Error(`${method} ${path} answered ${res.status}, expected ${expect}: ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }

  // ── setup ─────────────────────────────────────────────────────────────

  /**
   * A shop with a small catalog, set up through the API:
   *   Burgers: Cheeseburger (toppings Extra cheese, Bacon; up to 2)
   *   Sides:   Fries (untracked), Onion Rings (untracked)
   *   Desserts: Apple Pie (tracked, 8 in stock)
   *   Drinks:  Cola (untracked)
   * Resolves to {shopId, name, items: {burger, fries, rings, pie, cola}, toppings: {cheese, bacon}}.
   */
  async setupShop({ name = 'E2E Diner' } = {}) {
    const shop = await this.call('POST', '/api/v1/shops', {
      expect: 201,
      body: { name, currency: 'USD', timezone: 'UTC' },
    });
    const toppings = { cheese: randomUUID(), bacon: randomUUID() };
    const items = {
      burger: randomUUID(),
      fries: randomUUID(),
      rings: randomUUID(),
      pie: randomUUID(),
      cola: randomUUID(),
    };
    await this.call('PUT', `/api/v1/shops/${shop.shopId}/catalog`, {
      body: {
        toppings: [
          { toppingId: toppings.cheese, name: 'Extra cheese', price: 150 },
          { toppingId: toppings.bacon, name: 'Bacon', price: 200 },
        ],
        items: [
          {
            menuItemId: items.burger,
            name: 'Cheeseburger',
            description: 'Quarter pound, cheddar, pickles',
            category: 'Burgers',
            price: 1290,
            toppingIds: [toppings.cheese, toppings.bacon],
            maxToppings: 2,
          },
          { menuItemId: items.fries, name: 'Fries', description: 'Skin-on, sea salt', category: 'Sides', price: 450 },
          { menuItemId: items.rings, name: 'Onion Rings', category: 'Sides', price: 500 },
          {
            menuItemId: items.pie,
            name: 'Apple Pie',
            description: 'Warm, with vanilla ice cream',
            category: 'Desserts',
            price: 600,
          },
          { menuItemId: items.cola, name: 'Cola', category: 'Drinks', price: 300 },
        ],
      },
    });
    await this.call('PUT', `/api/v1/shops/${shop.shopId}/inventory/${items.pie}`, { body: { stock: 8 } });
    return { shopId: shop.shopId, name: shop.name, items, toppings };
  }

  /** Opens a table: resolves to the session (with pin and guestUrl). */
  openTable(shopId, tableLabel) {
    return this.call('POST', `/api/v1/shops/${shopId}/sessions`, { expect: 201, body: { tableLabel } });
  }

  /** The table's orders, newest first (guest view, with its PIN). */
  async sessionOrders(session) {
    const body = await this.call('GET', `/api/v1/sessions/${session.sessionId}/orders?limit=100`, {
      auth: { pin: session.pin },
    });
    return body.orders;
  }

  /** The shop's audit entries, newest first. */
  async audit(shopId, limit = 100) {
    const body = await this.call('GET', `/api/v1/shops/${shopId}/audit?limit=${limit}`);
    return body.entries;
  }

  /** A guest order sent directly (not through a page). Resolves to the raw response. */
  guestOrder(session, items, { clientId = `e2e-${randomUUID()}`, key = randomUUID(), note } = {}) {
    return this.request('POST', `/api/v1/sessions/${session.sessionId}/orders`, {
      auth: { pin: session.pin, clientId },
      headers: { 'Idempotency-Key': key },
      body: note === undefined ? { items } : { items, note },
    });
  }

  /**
   * Guesses a table's PIN wrong once (GET the session with a PIN that is
   * not its own), from this machine's address. Resolves to the raw response.
   */
  guessPin(session) {
    return this.request('GET', `/api/v1/sessions/${session.sessionId}`, { auth: { pin: wrongPin(session.pin) } });
  }

  /** Moves an order along as staff (no expectedVersion). */
  setStatus(orderId, status) {
    return this.call('POST', `/api/v1/orders/${orderId}/status`, { body: { status } });
  }
}

/** A six-digit PIN that is not `pin`. */
export function wrongPin(pin) {
  return String((Number(pin) + 1) % 1_000_000).padStart(6, '0');
}

/**
 * Polls `check` (sync or async) until it returns a truthy value, which it
 * resolves to; throws with the last value or error after `timeoutMs`.
 */
export async function eventually(check, { timeoutMs = 10_000, intervalMs = 100, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
