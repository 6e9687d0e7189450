/**
 * menu-rules.js: what the guest page knows about menu items, without DOM:
 * the allergen codes and dietary tags (with their icons), the menu filter,
 * and the rules of option groups (what a line may choose and what it costs).
 * Node imports it for tests (web/test/menu-rules.test.mjs).
 */

/**
 * The allergen codes the server accepts (docs/api.md "Shops and catalog"),
 * in the order the page lists them, each with a decorative icon. The text
 * is the message `allergen.<code>`; the icon is never the only sign.
 */
export const ALLERGENS = Object.freeze([
  // EU's 14 (Japan's labels share egg, milk, peanut, sesame, soy)
  ['gluten', '🌾'], ['wheat', '🌾'], ['buckwheat', '🥢'],
  ['crustaceans', '🦐'], ['shrimp', '🦐'], ['crab', '🦀'],
  ['egg', '🥚'], ['milk', '🥛'],
  ['fish', '🐟'], ['salmon', '🐟'], ['mackerel', '🐟'], ['salmon_roe', '🍣'],
  ['molluscs', '🦑'], ['squid', '🦑'], ['abalone', '🐚'],
  ['peanut', '🥜'],
  ['tree_nuts', '🌰'], ['walnut', '🌰'], ['almond', '🌰'], ['cashew', '🌰'], ['macadamia', '🌰'],
  ['soy', '🫘'], ['sesame', '⚪'],
  ['celery', '🥬'], ['mustard', '🟡'], ['sulphites', '🍷'], ['lupin', '🌼'],
  ['beef', '🐄'], ['pork', '🐖'], ['chicken', '🐔'], ['gelatin', '🍮'],
  ['orange', '🍊'], ['kiwi', '🥝'], ['banana', '🍌'], ['peach', '🍑'], ['apple', '🍎'],
  ['yam', '🍠'],
].map(([code, icon]) => Object.freeze({ code, icon })));

const ALLERGEN_ORDER = new Map(ALLERGENS.map((a, i) => [a.code, i]));
const ALLERGEN_ICON = new Map(ALLERGENS.map((a) => [a.code, a.icon]));

/** The icon of an allergen code ('⚠️' for one the page does not know). */
export function allergenIcon(code) {
  return ALLERGEN_ICON.get(code) ?? '⚠️';
}

/**
 * Codes that name the same danger more or less broadly: cereals with gluten
 * and wheat, crustaceans and shrimp or crab, tree nuts and each nut, fish
 * and each fish (roe included), molluscs and squid or abalone. A guest who
 * leaves out one of them does not want the others either: an item that
 * says "gluten" may mean wheat, one that says "walnut" has tree nuts.
 */
export const RELATED_ALLERGENS = Object.freeze({
  gluten: ['wheat'],
  crustaceans: ['shrimp', 'crab'],
  tree_nuts: ['walnut', 'almond', 'cashew', 'macadamia'],
  fish: ['salmon', 'mackerel', 'salmon_roe'],
  molluscs: ['squid', 'abalone'],
});

/** Every code an exclusion of `code` stands for (itself, its broader and narrower codes). */
export function allergenFamily(code) {
  const family = new Set([code]);
  for (const [broad, narrow] of Object.entries(RELATED_ALLERGENS)) {
    if (broad === code) for (const n of narrow) family.add(n);
    if (narrow.includes(code)) family.add(broad);
  }
  return family;
}

/** The dietary tags the page has a label (message `tag.<tag>`) and icon for. */
export const KNOWN_TAGS = Object.freeze([
  Object.freeze({ tag: 'vegetarian', icon: '🥕' }),
  Object.freeze({ tag: 'vegan', icon: '🌱' }),
  Object.freeze({ tag: 'halal', icon: '☪️' }),
  Object.freeze({ tag: 'gluten_free', icon: '🚫🌾' }),
  Object.freeze({ tag: 'spicy', icon: '🌶️' }),
]);
const TAG_ORDER = new Map(KNOWN_TAGS.map((t, i) => [t.tag, i]));
const TAG_ICON = new Map(KNOWN_TAGS.map((t) => [t.tag, t.icon]));

export function isKnownTag(tag) {
  return TAG_ORDER.has(tag);
}

export function tagIcon(tag) {
  return TAG_ICON.get(tag) ?? null;
}

/** Tags an item has because of another one: vegan food is vegetarian. */
const IMPLIED_TAGS = Object.freeze({ vegan: ['vegetarian'] });

/** An item's tags with the implied ones (a vegan dish is vegetarian too). */
export function effectiveTags(item) {
  const tags = new Set(item?.tags ?? []);
  for (const t of [...tags]) for (const implied of IMPLIED_TAGS[t] ?? []) tags.add(implied);
  return tags;
}

// ── the menu filter ─────────────────────────────────────────────────────

/**
 * What the menu can be filtered by: the allergens its items declare (in
 * the page's order), and its items' tags (known ones first, then the
 * shop's own, alphabetically; implied tags count).
 */
export function filterChoices(items) {
  const allergens = new Set();
  const tags = new Set();
  for (const item of items ?? []) {
    for (const a of item.allergens ?? []) allergens.add(a);
    for (const t of effectiveTags(item)) tags.add(t);
  }
  const byOrder = (order) => (a, b) => {
    const ia = order.get(a) ?? Infinity;
    const ib = order.get(b) ?? Infinity;
    return ia !== ib ? ia - ib : a.localeCompare(b);
  };
  return {
    allergens: [...allergens].sort(byOrder(ALLERGEN_ORDER)),
    tags: [...tags].sort(byOrder(TAG_ORDER)),
  };
}

/** An empty filter: {exclude: Set of allergen codes, require: Set of tags}. */
export function emptyFilter() {
  return { exclude: new Set(), require: new Set() };
}

export function filterIsEmpty(filter) {
  return !filter || (filter.exclude.size === 0 && filter.require.size === 0);
}

/**
 * Whether an item stays on the filtered menu: it declares none of the
 * excluded allergens (nor a related one, see allergenFamily) and has every
 * required tag.
 */
export function itemPasses(item, filter) {
  if (filterIsEmpty(filter)) return true;
  const declared = new Set(item?.allergens ?? []);
  for (const code of filter.exclude) {
    for (const c of allergenFamily(code)) if (declared.has(c)) return false;
  }
  const tags = effectiveTags(item);
  for (const t of filter.require) if (!tags.has(t)) return false;
  return true;
}

// ── option groups ───────────────────────────────────────────────────────

/** optionId → {option, group} for one item. */
export function optionIndex(item) {
  const index = new Map();
  for (const group of item?.optionGroups ?? []) {
    for (const option of group.options ?? []) index.set(option.optionId, { option, group });
  }
  return index;
}

/** Whether an item is chosen through the item sheet rather than a quick Add. */
export function hasChoices(item) {
  return (item?.optionGroups ?? []).some((g) => (g.options ?? []).length > 0);
}

/** Whether a group must be chosen from (minChoices ≥ 1). */
export function isRequired(group) {
  return (group?.minChoices ?? 0) >= 1;
}

/** A group's effective maximum (maxChoices, or all of its options). */
export function maxOf(group) {
  return group?.maxChoices ?? (group?.options ?? []).length;
}

/**
 * What is wrong with choosing `optionIds` for `item`, as the server would
 * judge it: [{kind: 'unknown', optionId}] for an option the item does not
 * offer, [{kind: 'min' | 'max', group, chosen}] for a group chosen too few
 * or too many times. [] when the choice is fine.
 */
export function choiceProblems(item, optionIds) {
  const index = optionIndex(item);
  const problems = [];
  const counts = new Map();
  for (const id of optionIds ?? []) {
    const hit = index.get(id);
    if (!hit) { problems.push({ kind: 'unknown', optionId: id }); continue; }
    counts.set(hit.group.groupId, (counts.get(hit.group.groupId) ?? 0) + 1);
  }
  for (const group of item?.optionGroups ?? []) {
    const chosen = counts.get(group.groupId) ?? 0;
    if (chosen < (group.minChoices ?? 0)) problems.push({ kind: 'min', group, chosen });
    else if (chosen > maxOf(group)) problems.push({ kind: 'max', group, chosen });
  }
  return problems;
}

/**
 * Whether a group can still be satisfied with what is not sold out. An
 * item with a required group that cannot is sold out (the server says so
 * too, but only on the next menu read after an option's stock event).
 */
export function groupCanBeMet(group) {
  const left = (group.options ?? []).filter((o) => !o.soldOut).length;
  return left >= (group.minChoices ?? 0);
}

export function itemBlockedByOptions(item) {
  return (item?.optionGroups ?? []).some((g) => !groupCanBeMet(g));
}

/**
 * The price of one unit of a line: the item's price plus its toppings' and
 * options' prices. `toppings` maps toppingId → topping. Unknown ids add 0.
 */
export function unitPriceOf(item, { toppingIds = [], optionIds = [] } = {}, toppings = new Map()) {
  if (!item) return null;
  let price = item.price ?? 0;
  for (const id of toppingIds) price += toppings.get(id)?.price ?? 0;
  const index = optionIndex(item);
  for (const id of optionIds) price += index.get(id)?.option.price ?? 0;
  return price;
}

/**
 * A line's option ids in the menu's order (group by group), the order the
 * server keeps them in on a placed line; unknown ids last.
 */
export function orderedOptionIds(item, optionIds) {
  const order = [...optionIndex(item).keys()];
  const rank = (id) => { const i = order.indexOf(id); return i < 0 ? Infinity : i; };
  return [...optionIds].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
