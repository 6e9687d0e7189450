// The allergen codes the pages know are the server's, and the guest page
// and the menu editor know the same ones: a code added on one side and not
// the other would be a dish whose allergen a guest is never shown.
// Run: node --test web/test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import { ALLERGENS as GUEST } from '../menu-rules.js';
import { ALLERGENS as EDITOR } from '../menu-editor-data.js';

/** The codes of `pub const ALLERGENS` in crates/domain/src/allergens.rs. */
function serverCodes() {
  const source = readFileSync(new URL('../../crates/domain/src/allergens.rs', import.meta.url), 'utf8');
  const list = /pub const ALLERGENS: \[&str; \d+\] = \[([\s\S]*?)\];/.exec(source);
  assert.ok(list, 'the server\'s list is where it was');
  return [...list[1].matchAll(/"([a-z_]+)"/g)].map((m) => m[1]).sort();
}

test('the guest page and the menu editor know exactly the server\'s allergen codes', () => {
  const server = serverCodes();
  assert.equal(server.length, 37);
  assert.deepEqual(GUEST.map((a) => a.code).sort(), server);
  assert.deepEqual(EDITOR.map((a) => a.code).sort(), server);
});
