// A test's world: the real server (lib/server.mjs) and Debian's headless
// Chromium driven by playwright-core, with helpers to open the three pages
// the way people do, save screenshots, and report what the pages and the
// server said when something fails. Every wait has a deadline.

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { E2E_DIR, startServer } from './server.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
export const SCREENSHOT_DIR = join(E2E_DIR, 'screenshots');

/** How long any single wait for the pages may take (actions, selectors). */
export const WAIT_MS = 15_000;
const NAVIGATION_MS = 20_000;
const LAUNCH_MS = 30_000;
const CLOSE_MS = 15_000;

/** A phone (the guest page) and a tablet/desktop screen (kitchen, staff). */
export const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const SCREEN = { viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 };

/** Resolves or rejects like `promise`, or rejects after `ms`. */
export function withDeadline(promise, ms, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export class Scene {
  /** Starts the server and the browser, and sets up a shop with a catalog. */
  static async start({ serverArgs = [] } = {}) {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`no Chromium at ${CHROMIUM}: \`apt-get install -y chromium\` (or set CHROMIUM_PATH)`);
    }
    const server = await startServer({ args: serverArgs });
    let browser;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: LAUNCH_MS });
      const shop = await server.setupShop();
      return new Scene(server, browser, shop);
    } catch (err) {
      if (browser) await withDeadline(browser.close(), CLOSE_MS, 'closing the browser').catch(() => {});
      await server.stop();
      throw err;
    }
  }

  constructor(server, browser, shop) {
    this.server = server;
    this.browser = browser;
    this.shop = shop;
    this.pageErrors = [];
    this.consoleLines = [];
    this.pages = [];
  }

  /** A new browser context (its own storage: one device). */
  async context(device = SCREEN) {
    const context = await this.browser.newContext({ ...device, locale: 'en-US', timezoneId: 'UTC' });
    context.setDefaultTimeout(WAIT_MS);
    context.setDefaultNavigationTimeout(NAVIGATION_MS);
    return context;
  }

  /** A page that reports uncaught errors and console output under `name`. */
  async page(context, name) {
    const page = await context.newPage();
    this.pages.push({ name, page });
    page.on('pageerror', (err) => this.pageErrors.push(`${name}: ${err.stack || err.message}`));
    page.on('crash', () => this.pageErrors.push(`${name}: the page crashed`));
    page.on('console', (msg) => {
      this.consoleLines.push(`${name} console.${msg.type()}: ${msg.text()}`);
      if (this.consoleLines.length > 300) this.consoleLines.shift();
    });
    return page;
  }

  /**
   * The guest page of `session` as a guest opens it from the QR code (its
   * guestUrl, PIN in the fragment), on a phone of its own unless `context`
   * is given. Resolves once the page is loaded and its live stream is up.
   */
  async openGuest(session, { context, name = 'guest' } = {}) {
    const page = await this.visitGuest(session, { context, name });
    await page.locator('#menu-items[aria-busy="false"]').waitFor({ state: 'attached' });
    await page.locator('#live[data-state="live"]').waitFor({ state: 'attached' });
    return page;
  }

  /**
   * The guest page of `session` opened from its guestUrl, as far as the
   * page gets: resolves once its first load is done, whether the table let
   * it in or not (a refusal is shown in #notice).
   */
  async visitGuest(session, { context, name = 'guest' } = {}) {
    const ctx = context ?? (await this.context(PHONE));
    const page = await this.page(ctx, name);
    await page.goto(session.guestUrl);
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
    return page;
  }

  /** The kitchen display, signed in with the staff token, its stream live. */
  async openKitchen({ context, name = 'kitchen' } = {}) {
    const ctx = context ?? (await this.context(SCREEN));
    const page = await this.page(ctx, name);
    await page.goto(this.server.url(`/kitchen/${this.shop.shopId}`));
    await this.signIn(page);
    await page.locator('#shop-name', { hasText: this.shop.name }).waitFor();
    return page;
  }

  /** The staff console, signed in, its stream live and its lists loaded. */
  async openStaff({ context, name = 'staff' } = {}) {
    const ctx = context ?? (await this.context(SCREEN));
    const page = await this.page(ctx, name);
    await page.goto(this.server.url(`/staff/${this.shop.shopId}`));
    await this.signIn(page);
    await page.locator('#shop-name', { hasText: this.shop.name }).waitFor();
    await page.locator(`#inventory-list tr[data-item-id="${this.shop.items.burger}"]`).waitFor();
    return page;
  }

  /** Types the staff token into a staff page's sign-in form. */
  async signIn(page) {
    await page.locator('#token-input').fill(this.server.token);
    await page.locator('#token-form button[type=submit]').click();
    await page.locator('#app').waitFor({ state: 'visible' });
    await page.locator('#connection[data-state="live"]').waitFor();
  }

  /**
   * Saves a PNG under e2e/screenshots/ and resolves to its path. `target`
   * is a page or a locator. With {fullPage: true} the page's viewport is
   * made as tall as the page for the shot (so sticky headers and fixed bars
   * sit where a reader expects them), then set back.
   */
  async screenshot(target, name, { fullPage = false, ...options } = {}) {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    const path = join(SCREENSHOT_DIR, `${name}.png`);
    const size = fullPage ? target.viewportSize() : null;
    if (size) {
      await target.evaluate(() => window.scrollTo(0, 0));
      const height = await target.evaluate(() => document.documentElement.scrollHeight);
      await target.setViewportSize({ width: size.width, height: Math.min(Math.max(height, size.height), 8000) });
      // Let layout and observers (the guest page's cart bar) settle.
      await target.evaluate(
        () =>
          new Promise((r) => {
            requestAnimationFrame(() => requestAnimationFrame(r));
            setTimeout(r, 1000);
          }),
      );
    }
    try {
      await target.screenshot({ path, animations: 'disabled', ...options });
    } finally {
      if (size) await target.setViewportSize(size);
    }
    return path;
  }

  /**
   * Runs a test body. On failure the error carries what the pages logged
   * and the server's last log lines; on success no page may have thrown.
   */
  async run(fn) {
    try {
      await fn();
    } catch (err) {
      const shots = await this.failureScreenshots();
      err.message += `\n${this.diagnostics()}${shots.length ? `\n--- screenshots ---\n${shots.join('\n')}` : ''}`;
      throw err;
    }
    if (this.pageErrors.length) {
      throw new Error(`uncaught errors in the pages:\n${this.pageErrors.join('\n')}\n${this.diagnostics()}`);
    }
  }

  /** Shots of every open page at the moment a test failed: failed-<page>.png. */
  async failureScreenshots() {
    const paths = [];
    for (const [i, { name, page }] of this.pages.entries()) {
      if (page.isClosed()) continue;
      try {
        paths.push(await withDeadline(this.screenshot(page, `failed-${i + 1}-${name}`), 10_000, 'a screenshot'));
      } catch {
        // the page may be gone or stuck: the report goes on without it
      }
    }
    return paths;
  }

  diagnostics() {
    return [
      '--- page errors ---',
      ...this.pageErrors,
      '--- page console (last lines) ---',
      ...this.consoleLines.slice(-40),
      '--- server log (last lines) ---',
      this.server.logTail(),
    ].join('\n');
  }

  async close() {
    await withDeadline(this.browser.close(), CLOSE_MS, 'closing the browser').catch((err) => {
      console.error(err.message);
    });
    await this.server.stop();
  }
}
