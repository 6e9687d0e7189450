// Unit tests of web/staff-order-draft.js (the draft of a staff-entered
// order) and staff-dom.js's soldOutNow, which it shares with the inventory.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import { Draft, indexMenu, lineKey, lineProblems, refusalByLine, stockWarning } from '../staff-order-draft.js';
import { soldOutNow } from '../staff-dom.js';
import { MAX_QUANTITY } from '../order-sdk.js';

const T0 = Date.parse('2026-12-01T12:00:00Z');

const MENU = {
  currency: 'USD',
  items: [
    {
      menuItemId: 'steak',
      name: 'Steak',
      price: 2400,
      maxToppings: 1,
      toppings: [{ toppingId: 'butter', name: 'Butter', price: 50 }],
      optionGroups: [
        {
          groupId: 'doneness', name: 'Doneness', minChoices: 1, maxChoices: 1,
          options: [{ optionId: 'rare', name: 'Rare', price: 0 }, { optionId: 'medium', name: 'Medium', price: 100 }],
        },
        {
          groupId: 'sides', name: 'Sides', minChoices: 0, maxChoices: 2,
          options: [{ optionId: 'fries', name: 'Fries', price: 300 }, { optionId: 'salad', name: 'Salad', price: 200 }],
        },
      ],
    },
    { menuItemId: 'beer', name: 'Beer', price: 700, stock: 1 },
  ],
};

describe('a staff order\'s draft', () => {
  test('the same item, choices and note are one line, whatever their order', () => {
    assert.equal(
      lineKey({ menuItemId: 'steak', optionIds: ['salad', 'rare'], note: ' no salt ' }),
      lineKey({ menuItemId: 'steak', optionIds: ['rare', 'salad'], note: 'no salt' }),
    );
    assert.notEqual(lineKey({ menuItemId: 'steak', optionIds: ['rare'] }), lineKey({ menuItemId: 'steak', optionIds: ['medium'] }));

    const menu = indexMenu(MENU);
    const draft = new Draft();
    const steak = menu.items.get('steak');
    const key = draft.add({ menuItemId: 'steak', optionIds: ['salad', 'rare'] }, steak);
    assert.equal(draft.add({ menuItemId: 'steak', optionIds: ['rare', 'salad'], quantity: 2 }, steak), key);
    assert.equal(draft.lines.length, 1);
    assert.equal(draft.lines[0].quantity, 3);
    assert.deepEqual(draft.lines[0].optionIds, ['rare', 'salad'], 'in the menu\'s order, as the server keeps them');
    draft.add({ menuItemId: 'steak', optionIds: ['rare', 'salad'], quantity: MAX_QUANTITY }, steak);
    assert.equal(draft.lines[0].quantity, MAX_QUANTITY, 'never more than the server takes');
    draft.setQuantity(key, 0);
    assert.equal(draft.empty, true, 'a quantity of 0 removes the line');
    assert.equal(draft.problem(), 'Add at least one item.');
  });

  test('the body, the total, and an intent that changes with the draft only', () => {
    const menu = indexMenu(MENU);
    const draft = new Draft();
    draft.add({ menuItemId: 'steak', optionIds: ['medium'], note: 'no salt' }, menu.items.get('steak'));
    const beer = draft.add({ menuItemId: 'beer', quantity: 2 });
    assert.deepEqual(draft.body(), {
      items: [
        { menuItemId: 'steak', quantity: 1, toppingIds: [], optionIds: ['medium'], note: 'no salt' },
        { menuItemId: 'beer', quantity: 2, toppingIds: [], optionIds: [] },
      ],
      note: '',
    });
    assert.equal(draft.total(menu), 2500 + 2 * 700);
    const intent = draft.intent('s1');
    assert.equal(draft.intent('s1'), intent, 'sent again: the same intent, so the same Idempotency-Key');
    assert.notEqual(draft.intent('s2'), intent, 'another table');
    draft.setQuantity(beer, 1);
    assert.notEqual(draft.intent('s1'), intent, 'a changed draft is a new request');
  });

  test('what the menu says is wrong with a line', () => {
    const menu = indexMenu(MENU);
    const line = (overrides) => ({ menuItemId: 'steak', quantity: 1, toppingIds: [], optionIds: ['rare'], note: '', ...overrides });
    assert.deepEqual(lineProblems(line(), menu, T0), []);
    assert.deepEqual(lineProblems(line({ optionIds: [] }), menu, T0), ['Choose one Doneness.']);
    assert.deepEqual(lineProblems(line({ optionIds: ['rare', 'gone'] }), menu, T0), ['A choice is no longer offered.']);
    assert.deepEqual(lineProblems(line({ menuItemId: 'gone' }), menu, T0), ['No longer on the menu.']);
    assert.deepEqual(lineProblems(line({ note: 'a\nb' }), menu, T0), ['The note must be one line.']);
    assert.equal(stockWarning({ menuItemId: 'beer', quantity: 2 }, menu), 'The menu says 1 left.');
    assert.equal(stockWarning({ menuItemId: 'beer', quantity: 1 }, menu), '');
  });

  test('an 86 with an end stops counting at that end; no stock is sold out whatever the end', () => {
    const until = new Date(T0 + 60_000).toISOString();
    assert.equal(soldOutNow({ soldOut: true, soldOutUntil: until }, T0), true);
    assert.equal(soldOutNow({ soldOut: true, soldOutUntil: until }, T0 + 60_000), false);
    assert.equal(soldOutNow({ soldOut: true, stock: 0, soldOutUntil: until }, T0 + 60_000), true);
    assert.equal(soldOutNow({ soldOut: false }, T0), false);
    assert.equal(soldOutNow(undefined, T0), false);
  });

  test('the server\'s refusal is put on the lines it names', () => {
    const menu = indexMenu(MENU);
    const draft = new Draft();
    const steak = draft.add({ menuItemId: 'steak', optionIds: ['rare'] }, menu.items.get('steak'));
    const beer = draft.add({ menuItemId: 'beer', quantity: 2 });

    const short = refusalByLine(
      { code: 'OUT_OF_STOCK', shortages: [{ itemId: 'beer', requested: 2, available: 1 }] },
      draft,
      menu,
    );
    assert.equal(short.general, 'Not enough stock: nothing was sent.');
    assert.deepEqual([...short.lines], [[beer, 'Beer: only 1 left (2 asked for).']]);

    const invalid = refusalByLine(
      {
        code: 'INVALID_OPTIONS',
        detail: 'the options do not fit the item',
        errors: [{ field: 'items[0].optionIds', message: 'choose one Doneness' }],
      },
      draft,
      menu,
    );
    assert.deepEqual([...invalid.lines], [[steak, 'Choose one Doneness.']]);
    assert.equal(invalid.general, 'The options do not fit the item. Nothing was sent: fix the marked lines.');
  });
});
