// Unit tests of the staff and devices panel (web/staff-team.js) and of what
// a signed-in credential may do in a shop (rightsIn, web/console.js).
// Run: node --test web/test/

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { rightsIn } from '../console.js';
import { deviceKind, deviceLink } from '../staff-team.js';

const SHOP = '6f1c2a1e-3a4b-4c5d-8e9f-0a1b2c3d4e5f';

test('a kitchen display signs in on the kitchen page, a floor tablet on the console', () => {
  const token = 'og_device_abc123';
  assert.equal(
    deviceLink('https://diner.example', SHOP, { role: 'kitchen', token }),
    `https://diner.example/kitchen/${SHOP}#device=og_device_abc123`,
  );
  assert.equal(
    deviceLink('https://diner.example', SHOP, { role: 'floor', token }),
    `https://diner.example/staff/${SHOP}#device=og_device_abc123`,
  );
  assert.equal(deviceKind('kitchen'), 'Kitchen display');
  assert.equal(deviceKind('floor'), 'Floor tablet');
});

test('rights are the role and duties of this shop, all for the administrator', () => {
  const floor = {
    kind: 'account',
    account: { accountId: 'a', username: 'rin' },
    shops: [
      { shopId: 'other', role: 'owner', may: ['staff'] },
      { shopId: SHOP, role: 'floor', may: ['tables', 'sessions', 'kitchen', 'service'] },
    ],
  };
  const rights = rightsIn(floor, SHOP);
  assert.equal(rights.role, 'floor');
  assert.equal(rights.name, 'rin');
  assert.deepEqual([...rights.may], ['tables', 'sessions', 'kitchen', 'service']);
  assert.equal(rightsIn(floor, 'nowhere'), null);

  const device = { kind: 'device', device: { deviceId: 'd', name: 'Pass' }, shops: [{ shopId: SHOP, role: 'kitchen', may: ['kitchen', 'service'] }] };
  assert.equal(rightsIn(device, SHOP).name, 'Pass');

  const admin = rightsIn({ kind: 'admin', shops: [] }, SHOP);
  assert.equal(admin.role, null);
  for (const duty of ['catalog', 'staff', 'devices', 'settings', 'printers']) assert.ok(admin.may.has(duty), duty);
});
