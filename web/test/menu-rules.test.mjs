// Unit tests of web/menu-rules.js: option group rules, prices, the menu filter.
// Run: node --test web/test/

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';

import {
  ALLERGENS, allergenFamily, filterChoices, emptyFilter, itemPasses, effectiveTags,
  choiceProblems, unitPriceOf, hasChoices, itemBlockedByOptions, orderedOptionIds, maxOf,
} from '../menu-rules.js';

const STEAK = {
  menuItemId: 'steak',
  name: 'Steak',
  price: 2000,
  allergens: ['beef', 'milk'],
  tags: ['gluten_free'],
  maxToppings: 1,
  toppings: [{ toppingId: 'butter', price: 50 }],
  optionGroups: [
    {
      groupId: 'doneness', name: 'Doneness', minChoices: 1, maxChoices: 1,
      options: [{ optionId: 'rare', price: 0 }, { optionId: 'medium', price: 100 }],
    },
    {
      groupId: 'sides', name: 'Sides', minChoices: 0, maxChoices: 2,
      options: [{ optionId: 'fries', price: 300 }, { optionId: 'salad', price: 200 }, { optionId: 'rice', price: 0 }],
    },
  ],
};
const SATAY = { menuItemId: 'satay', price: 900, allergens: ['peanut'], tags: [], optionGroups: [] };
const UDON = { menuItemId: 'udon', price: 800, allergens: ['wheat'], tags: ['vegan'], optionGroups: [] };
const BREAD = { menuItemId: 'bread', price: 300, allergens: ['gluten'], tags: ['vegetarian', 'house_special'], optionGroups: [] };

describe('option groups', () => {
  test('a required single choice must be made, once', () => {
    assert.deepEqual(choiceProblems(STEAK, []).map((p) => [p.kind, p.group.groupId]), [['min', 'doneness']]);
    assert.deepEqual(choiceProblems(STEAK, ['rare']), []);
    assert.deepEqual(choiceProblems(STEAK, ['rare', 'medium']).map((p) => p.kind), ['max']);
  });

  test('an optional group up to its maximum', () => {
    assert.deepEqual(choiceProblems(STEAK, ['rare', 'fries', 'salad']), []);
    assert.deepEqual(choiceProblems(STEAK, ['rare', 'fries', 'salad', 'rice']).map((p) => [p.kind, p.group.groupId]), [['max', 'sides']]);
  });

  test('an option the item does not offer', () => {
    assert.deepEqual(choiceProblems(STEAK, ['rare', 'ghost']).map((p) => [p.kind, p.optionId]), [['unknown', 'ghost']]);
  });

  test('maxChoices defaults to every option', () => {
    assert.equal(maxOf({ options: [{}, {}, {}] }), 3);
    assert.equal(maxOf({ maxChoices: 1, options: [{}, {}] }), 1);
  });

  test('the line price adds options and toppings', () => {
    const toppings = new Map([['butter', { toppingId: 'butter', price: 50 }]]);
    assert.equal(unitPriceOf(STEAK, { optionIds: ['medium'] }), 2100);
    assert.equal(unitPriceOf(STEAK, { optionIds: ['medium', 'fries', 'salad'], toppingIds: ['butter'] }, toppings), 2650);
    assert.equal(unitPriceOf(STEAK, { optionIds: ['ghost'] }), 2000);
    assert.equal(unitPriceOf(null, {}), null);
  });

  test('hasChoices, and an item whose required group is sold out', () => {
    assert.equal(hasChoices(STEAK), true);
    assert.equal(hasChoices(SATAY), false);
    assert.equal(itemBlockedByOptions(STEAK), false);
    const gone = structuredClone(STEAK);
    for (const o of gone.optionGroups[0].options) o.soldOut = true;
    assert.equal(itemBlockedByOptions(gone), true);
    gone.optionGroups[0].options[0].soldOut = false;
    assert.equal(itemBlockedByOptions(gone), false);
    const sides = structuredClone(STEAK);
    for (const o of sides.optionGroups[1].options) o.soldOut = true;
    assert.equal(itemBlockedByOptions(sides), false, 'an optional group may run out');
  });

  test('orderedOptionIds follows the menu (group by group)', () => {
    assert.deepEqual(orderedOptionIds(STEAK, ['salad', 'medium', 'fries']), ['medium', 'fries', 'salad']);
  });
});

describe('allergens, tags and the filter', () => {
  test('every allergen code once', () => {
    const codes = ALLERGENS.map((a) => a.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of ['gluten', 'crustaceans', 'egg', 'fish', 'peanut', 'soy', 'milk', 'tree_nuts', 'celery',
      'mustard', 'sesame', 'sulphites', 'lupin', 'molluscs', 'wheat', 'buckwheat', 'shrimp', 'crab', 'walnut',
      'almond', 'abalone', 'squid', 'salmon_roe', 'orange', 'cashew', 'kiwi', 'beef', 'salmon', 'mackerel',
      'chicken', 'banana', 'pork', 'macadamia', 'peach', 'yam', 'apple', 'gelatin']) {
      assert.ok(codes.includes(code), code);
    }
  });

  test('related allergens stand for each other', () => {
    assert.deepEqual([...allergenFamily('wheat')].sort(), ['gluten', 'wheat']);
    assert.deepEqual([...allergenFamily('gluten')].sort(), ['gluten', 'wheat']);
    assert.deepEqual([...allergenFamily('peanut')], ['peanut']);
    assert.ok(allergenFamily('tree_nuts').has('walnut'));
    assert.ok(allergenFamily('walnut').has('tree_nuts'));
  });

  test('the choices are what the menu declares, in the page\'s order', () => {
    const choices = filterChoices([STEAK, SATAY, UDON, BREAD]);
    assert.deepEqual(choices.allergens, ['gluten', 'wheat', 'milk', 'peanut', 'beef']);
    assert.deepEqual(choices.tags, ['vegetarian', 'vegan', 'gluten_free', 'house_special']);
  });

  test('excluding an allergen hides the items that declare it (or a related one)', () => {
    const f = emptyFilter();
    f.exclude.add('peanut');
    assert.equal(itemPasses(SATAY, f), false);
    assert.equal(itemPasses(STEAK, f), true);
    f.exclude.clear();
    f.exclude.add('wheat');
    assert.equal(itemPasses(UDON, f), false);
    assert.equal(itemPasses(BREAD, f), false, 'gluten may be wheat');
    assert.equal(itemPasses(STEAK, f), true);
  });

  test('a tag keeps only the items that have it; vegan counts as vegetarian', () => {
    const f = emptyFilter();
    f.require.add('vegetarian');
    assert.deepEqual([STEAK, SATAY, UDON, BREAD].filter((i) => itemPasses(i, f)).map((i) => i.menuItemId), ['udon', 'bread']);
    f.require.add('vegan');
    assert.deepEqual([STEAK, SATAY, UDON, BREAD].filter((i) => itemPasses(i, f)).map((i) => i.menuItemId), ['udon']);
    assert.deepEqual([...effectiveTags(UDON)].sort(), ['vegan', 'vegetarian']);
  });

  test('an empty filter keeps everything', () => {
    for (const item of [STEAK, SATAY, UDON, BREAD, {}]) assert.equal(itemPasses(item, emptyFilter()), true);
  });
});
