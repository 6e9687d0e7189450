// Kitchen printers in the staff console (web/staff-printers.js), against a
// fake ESC/POS printer in Node (lib/fake-printer.mjs: it answers the
// status request DLE EOT 1 with "online"):
//   - added through the console's form (a name taken → 409 on the name, a
//     bad address → 422 on the address); a staff order prints: the printer
//     receives its ticket (#<n>) and the panel shows printed 1, idle;
//   - the printer unplugged, another order → the panel shows it failing
//     with the error and 1 ticket waiting; plugged in again on the same
//     port → the ticket prints and the panel is back to idle, printed 2;
//   - "Reprint a ticket" → "Queued", and the printer receives a copy headed
//     "REPRINT (copy)"; Remove (confirmed) → the API has no printer left.
//     Saves console-printers.png.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { FakePrinter } from '../lib/fake-printer.mjs';
import { staffOrder } from '../lib/kitchen-rush.mjs';
import { Scene } from '../lib/scene.mjs';
import { eventually } from '../lib/server.mjs';

/** The printer reconnects every 5 s once it has failed a while, the panel re-reads every 5 s. */
const PRINT_MS = 30_000;

/** The printer's row in the panel as the page shows it. */
function row(page, name) {
  return page.locator(`#printer-list tr[data-printer-name="${name}"]`);
}

describe('kitchen printers in the staff console', () => {
  let scene;
  let printer;
  before(async () => {
    scene = await Scene.start();
  });
  after(async () => {
    await printer?.stop().catch(() => {});
    await scene?.close();
  });

  test('a ticket prints, waits while the printer is off, prints when it is back; reprint; remove', () =>
    scene.run(async () => {
      const { server, shop } = scene;
      printer = await FakePrinter.start();
      const staff = await scene.openStaff();
      await staff.locator('a[href="#printers"]').click();
      await staff.locator('#printers-empty').waitFor();

      // Added through the form: all stations, idle, nothing printed.
      await staff.locator('#printer-name').fill('Kitchen');
      await staff.locator('#printer-address').fill(printer.address);
      await staff.locator('#printer-form button[type=submit]').click();
      const kitchen = row(staff, 'Kitchen');
      await kitchen.waitFor();
      assert.equal(await kitchen.locator('[data-role=address]').textContent(), printer.address);
      assert.equal(await kitchen.locator('[data-role=station]').textContent(), 'all stations');
      assert.equal(await kitchen.getAttribute('data-status'), 'idle');
      assert.equal(await staff.locator('#printer-name').inputValue(), '', 'the form is cleared');

      // The server's refusals, on the field: a name taken (409), a bad address (422).
      await staff.locator('#printer-name').fill('Kitchen');
      await staff.locator('#printer-address').fill(printer.address);
      await staff.locator('#printer-form button[type=submit]').click();
      await staff.locator('#printer-name-error', { hasText: 'already' }).waitFor();
      assert.equal(await staff.locator('#printer-name').getAttribute('aria-invalid'), 'true');
      await staff.locator('#printer-name').fill('Bar');
      await staff.locator('#printer-address').fill('not a host!');
      await staff.locator('#printer-form button[type=submit]').click();
      await staff.locator('#printer-address-error', { hasText: 'The address must be a host name' }).waitFor();
      assert.equal(await staff.locator('#printer-address').getAttribute('aria-invalid'), 'true');
      assert.equal(await staff.locator('#printer-name-error').textContent(), '');
      const { printers } = await server.call('GET', `/api/v1/shops/${shop.shopId}/printers`);
      assert.deepEqual(printers.map((p) => p.name), ['Kitchen']);

      // A staff order prints.
      const session = await server.openTable(shop.shopId, 'T1');
      const first = await staffOrder(server, session, [{ menuItemId: shop.items.burger, quantity: 1 }]);
      await eventually(() => printer.text().includes(`#${first.ticketNumber}`), {
        timeoutMs: PRINT_MS,
        what: `ticket #${first.ticketNumber} on the printer`,
      });
      await staff
        .locator(`#printer-list tr[data-printer-name="Kitchen"][data-status="idle"] [data-role=printed][data-printed="1"]`)
        .waitFor({ timeout: PRINT_MS });
      assert.match(await kitchen.locator('[data-role=printed]').textContent(), /^Printed 1 · last at /);
      assert.equal(await kitchen.locator('[data-role=badge]').textContent(), 'Idle');

      // Unplugged: the next ticket waits, the panel says failing with 1 waiting.
      const port = printer.port;
      await printer.stop();
      printer = null;
      const second = await staffOrder(server, session, [{ menuItemId: shop.items.fries, quantity: 2 }]);
      await staff
        .locator(`#printer-list tr[data-printer-name="Kitchen"][data-status="failing"][data-backlog="1"]`)
        .waitFor({ timeout: PRINT_MS });
      assert.equal(await kitchen.locator('[data-role=badge]').textContent(), 'Failing');
      assert.match(await kitchen.locator('[data-role=status-detail]').textContent(), /since .* · 1 ticket waiting$/);
      await scene.screenshot(staff.locator('#printers'), 'console-printers');

      // Back on the same port: it prints, the panel is idle again.
      printer = await FakePrinter.start(port);
      await eventually(() => printer.text().includes(`#${second.ticketNumber}`), {
        timeoutMs: PRINT_MS,
        what: `ticket #${second.ticketNumber} on the printer once back`,
      });
      await staff
        .locator(`#printer-list tr[data-printer-name="Kitchen"][data-status="idle"] [data-role=printed][data-printed="2"]`)
        .waitFor({ timeout: PRINT_MS });
      assert.equal(await kitchen.locator('[data-role=status-detail]').count(), 0);

      // Reprint the first ticket.
      await eventually(async () => (await staff.locator(`#reprint-order option[value="${first.orderId}"]`).count()) === 1, {
        timeoutMs: PRINT_MS,
        what: 'the first order in the reprint form',
      });
      await staff.locator('#reprint-order').selectOption(first.orderId);
      await staff.locator('#reprint-printer').selectOption({ label: 'Kitchen' });
      await staff.locator('#reprint-submit').click();
      await staff.locator('#reprint-status[data-kind="ok"]', { hasText: `Queued: ticket #${first.ticketNumber} on Kitchen.` }).waitFor();
      await eventually(() => printer.text().includes('REPRINT (copy)'), {
        timeoutMs: PRINT_MS,
        what: 'the reprint on the printer',
      });

      // Remove, confirmed.
      staff.once('dialog', (dialog) => dialog.accept());
      await kitchen.locator('[data-action=remove]').click();
      await staff.locator('#printers-empty').waitFor();
      assert.deepEqual((await server.call('GET', `/api/v1/shops/${shop.shopId}/printers`)).printers, []);
    }));
});
