// Unit tests of the time helpers in web/console.js: the staff pages show the
// shop's time (its IANA timezone), not the device's, and read and write
// datetime-local inputs as the shop's wall clock.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import {
  formatDateTime,
  formatTime,
  fromZonedInputValue,
  isTimeZone,
  setShopTimeZone,
  shopTimeZone,
  toZonedInputValue,
  zonedParts,
  zoneOffsetMs,
} from '../console.js';

const AKL = 'Pacific/Auckland'; // +13 in January (NZDT), +12 in July (NZST)
const iso = (ms) => new Date(ms).toISOString();
const HOUR = 3600_000;

describe('zones', () => {
  test('isTimeZone knows IANA names and refuses the rest', () => {
    assert.equal(isTimeZone('Pacific/Auckland'), true);
    assert.equal(isTimeZone('UTC'), true);
    assert.equal(isTimeZone('Mars/Olympus_Mons'), false);
    assert.equal(isTimeZone(''), false);
    assert.equal(isTimeZone(null), false);
  });

  test('zonedParts is the wall clock of an instant in a zone', () => {
    assert.deepEqual(zonedParts(Date.parse('2026-01-15T11:30:00Z'), AKL), {
      year: 2026, month: 1, day: 16, hour: 0, minute: 30, second: 0,
    });
    assert.deepEqual(zonedParts(Date.parse('2026-07-01T00:05:09Z'), 'America/New_York'), {
      year: 2026, month: 6, day: 30, hour: 20, minute: 5, second: 9,
    });
  });

  test('zoneOffsetMs follows daylight saving time', () => {
    assert.equal(zoneOffsetMs(Date.parse('2026-01-15T00:00:00Z'), AKL), 13 * HOUR);
    assert.equal(zoneOffsetMs(Date.parse('2026-07-15T00:00:00Z'), AKL), 12 * HOUR);
    assert.equal(zoneOffsetMs(Date.parse('2026-07-15T00:00:00Z'), 'Asia/Kolkata'), 5.5 * HOUR);
    assert.equal(zoneOffsetMs(Date.parse('2026-07-15T00:00:00.750Z'), 'UTC'), 0);
  });
});

describe('datetime-local values in the shop\'s zone', () => {
  test('toZonedInputValue writes the shop\'s wall clock, whatever the device\'s', () => {
    const at = Date.parse('2026-01-15T05:30:59Z');
    assert.equal(toZonedInputValue(at, AKL), '2026-01-15T18:30');
    assert.equal(toZonedInputValue(at, 'America/New_York'), '2026-01-15T00:30');
    assert.equal(toZonedInputValue(new Date(at), 'UTC'), '2026-01-15T05:30');
  });

  test('fromZonedInputValue reads it back as that instant', () => {
    assert.equal(iso(fromZonedInputValue('2026-01-15T18:30', AKL)), '2026-01-15T05:30:00.000Z');
    assert.equal(iso(fromZonedInputValue('2026-07-15T18:30', AKL)), '2026-07-15T06:30:00.000Z');
    assert.equal(iso(fromZonedInputValue('2026-01-15T18:30:15', 'UTC')), '2026-01-15T18:30:15.000Z');
    assert.equal(iso(fromZonedInputValue('2026-03-01T00:00', 'Asia/Kolkata')), '2026-02-28T18:30:00.000Z');
    for (const zone of [AKL, 'America/New_York', 'Europe/London', 'Asia/Tokyo', 'UTC']) {
      for (const at of [Date.parse('2026-02-03T04:05:00Z'), Date.parse('2026-08-09T22:58:00Z')]) {
        assert.equal(fromZonedInputValue(toZonedInputValue(at, zone), zone), at, `${zone} ${iso(at)}`);
      }
    }
  });

  test('a time the clocks skip is read as after the change; one they pass twice as the first', () => {
    // Auckland, 27 September 2026: 02:00 NZST becomes 03:00 NZDT.
    assert.equal(iso(fromZonedInputValue('2026-09-27T02:30', AKL)), '2026-09-26T14:30:00.000Z');
    assert.equal(toZonedInputValue(fromZonedInputValue('2026-09-27T02:30', AKL), AKL), '2026-09-27T03:30');
    // Auckland, 5 April 2026: 03:00 NZDT becomes 02:00 NZST; 02:30 happens twice.
    assert.equal(iso(fromZonedInputValue('2026-04-05T02:30', AKL)), '2026-04-04T13:30:00.000Z');
    // New York, 8 March 2026: 02:00 EST becomes 03:00 EDT.
    assert.equal(iso(fromZonedInputValue('2026-03-08T02:15', 'America/New_York')), '2026-03-08T07:15:00.000Z');
  });

  test('anything else is NaN', () => {
    for (const value of ['', null, undefined, 'tomorrow', '2026-01-15', '2026-01-15 18:30', '2026-13-01T00:00',
      '2026-04-31T10:00', '2026-01-15T24:00', '2026-01-15T18:60']) {
      assert.ok(Number.isNaN(fromZonedInputValue(value, AKL)), String(value));
    }
  });
});

describe('times shown', () => {
  test('formatTime shows the instant on the shop\'s clock', () => {
    const at = '2026-01-15T00:30:00Z';
    assert.equal(formatTime(at, { zone: AKL, locale: 'en-US' }), '01:30 PM');
    assert.equal(formatTime(at, { zone: AKL, locale: 'en-GB' }), '13:30');
    assert.equal(formatTime(at, { zone: 'America/New_York', locale: 'en-GB' }), '19:30');
    assert.equal(formatTime('not a time', { zone: AKL }), '');
  });

  test('formatDateTime adds the date when it is not the shop\'s today', () => {
    const at = '2026-01-15T00:30:00Z'; // 13:30 on the 15th in Auckland
    const opts = { zone: AKL, locale: 'en-GB' };
    assert.equal(formatDateTime(at, { ...opts, now: Date.parse('2026-01-15T10:00:00Z') }), '13:30');
    // 11:00Z is already the 16th in Auckland (the 15th in UTC): another day there.
    assert.match(formatDateTime(at, { ...opts, now: Date.parse('2026-01-15T11:00:00Z') }), /^15 Jan,? 13:30$/);
    // And the same UTC day can be another day in the shop's zone.
    assert.match(formatDateTime('2026-01-14T23:00:00Z', { ...opts, now: Date.parse('2026-01-14T09:00:00Z') }), /^15 Jan,? 12:00$/);
  });

  test('setShopTimeZone makes the shop\'s zone the default, and ignores an unknown one', () => {
    const at = '2026-01-15T00:30:00Z';
    try {
      setShopTimeZone(AKL);
      assert.equal(shopTimeZone(), AKL);
      assert.equal(formatTime(at, { locale: 'en-GB' }), '13:30');
      assert.equal(toZonedInputValue(Date.parse(at)), '2026-01-15T13:30');
      assert.equal(iso(fromZonedInputValue('2026-01-15T13:30')), '2026-01-15T00:30:00.000Z');
      setShopTimeZone('Nowhere/Special');
      assert.equal(shopTimeZone(), new Intl.DateTimeFormat().resolvedOptions().timeZone, 'the device\'s zone then');
    } finally {
      setShopTimeZone(null);
    }
  });
});
