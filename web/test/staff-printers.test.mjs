// Unit tests of the printers panel's texts (web/staff-printers.js): a
// printer's state, its station, what it printed, a reprint's ticket.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { orderOptionText, printedText, printerStatus, stationText, waitingText } from '../staff-printers.js';

const fmt = (iso) => `<${iso}>`;

describe('printer texts', () => {
  test('a station, or all stations', () => {
    assert.equal(stationText(null), 'all stations');
    assert.equal(stationText(undefined), 'all stations');
    assert.equal(stationText('grill'), 'grill');
  });

  test('tickets waiting', () => {
    assert.equal(waitingText(1), '1 ticket waiting');
    assert.equal(waitingText(0), '0 tickets waiting');
    assert.equal(waitingText(3), '3 tickets waiting');
    assert.equal(waitingText(undefined), '0 tickets waiting');
  });

  test('idle', () => {
    assert.deepEqual(printerStatus({ status: 'idle', backlog: 0 }, fmt), { status: 'idle', label: 'Idle', detail: '' });
  });

  test('printing says what waits', () => {
    assert.deepEqual(printerStatus({ status: 'printing', backlog: 2 }, fmt), {
      status: 'printing',
      label: 'Printing',
      detail: '2 tickets waiting',
    });
  });

  test('failing says the last error, since when, and what waits', () => {
    const p = { status: 'failing', backlog: 1, lastError: 'connection refused', lastErrorAt: '2026-12-01T12:00:00Z' };
    assert.deepEqual(printerStatus(p, fmt), {
      status: 'failing',
      label: 'Failing',
      detail: 'connection refused · since <2026-12-01T12:00:00Z> · 1 ticket waiting',
    });
    assert.equal(printerStatus({ status: 'failing', backlog: 0 }, fmt).detail, '0 tickets waiting');
  });

  test('an unknown status reads as idle', () => {
    assert.equal(printerStatus({ status: 'weird' }, fmt).status, 'idle');
    assert.equal(printerStatus(null, fmt).status, 'idle');
  });

  test('printed count and last time', () => {
    assert.equal(printedText({ printed: 0, lastPrintedAt: null }, fmt), 'Nothing printed yet');
    assert.equal(printedText({ printed: 3, lastPrintedAt: '2026-12-01T12:05:00Z' }, fmt), 'Printed 3 · last at <2026-12-01T12:05:00Z>');
    assert.equal(printedText({ printed: 1, lastPrintedAt: null }, fmt), 'Printed 1 · last time unknown');
  });

  test('printed time in the shop’s zone by default', async () => {
    const { setShopTimeZone } = await import('../console.js');
    setShopTimeZone('Pacific/Auckland');
    try {
      // 12:05 UTC is 01:05 the next day in Auckland (+13 in December): a date shows.
      const text = printedText({ printed: 1, lastPrintedAt: '2026-12-01T12:05:00Z' });
      assert.match(text, /^Printed 1 · last at .*(01|1):05/);
    } finally {
      setShopTimeZone('UTC');
    }
  });

  test('an order to reprint', () => {
    assert.equal(
      orderOptionText({ ticketNumber: 12, createdAt: '2026-12-01T12:05:00Z', status: 'ready' }, fmt),
      'Ticket #12 · <2026-12-01T12:05:00Z> · ready',
    );
    assert.equal(orderOptionText({ ticketNumber: 3 }, fmt), 'Ticket #3');
  });
});
