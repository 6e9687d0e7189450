// Menu editor (menu-editor.js): its state, in one place so that every part
// reads and writes the same thing: createState() gives the editor's state
// (`st`, one per editor; the parts get it from their context `ed`), and
// nextId() the uids of things the catalog has no id for yet (new items,
// groups, options, toppings; categories, which have none).

import { moneyFormatter } from './console.js';

let seq = 0;
export const nextId = (prefix) => `${prefix}${(seq += 1)}`;

export function createState() {
  return {
    started: false,
    loaded: false,
    loading: false,
    saving: false,
    visible: false,
    languages: ['en'],
    languagesDraft: ['en'],
    currency: 'USD',
    digits: 2,
    symbol: '$',
    money: moneyFormatter('USD'),
    etag: null,
    version: null,
    /** [{uid, text, items: [item uid]}] in menu order. */
    categories: [],
    /** Every item by uid: on the menu or retired. */
    items: new Map(),
    /** Retired item uids, newest first. */
    retired: [],
    toppings: [],
    retiredToppings: [],
    baseline: '',
    baselineItems: new Map(),
    selection: null,
    /** Problems of the last refused save: [{path, message, target, keys}]. */
    errors: [],
  };
}
