// Staff console: the kitchen's settings for the whole shop — how many
// minutes until a ticket on the kitchen display turns amber, then red
// (`kitchenWarnMinutes`, `kitchenLateMinutes` of the shop; PATCH
// /api/v1/shops/{shopId}). The server judges them (1–240, amber before
// red) and its 422 is shown on the field it names; the page only asks for
// whole numbers. Every kitchen screen re-reads the shop on the
// `menu.changed` event the PATCH sends. Hooks are listed in staff.js
// ("Kitchen").

import { api, announce, problemText } from './console.js';
import { $, fieldError, sentence } from './staff-dom.js';

const FIELDS = [
  { name: 'kitchenWarnMinutes', input: 'kitchen-warn-minutes', error: 'kitchen-warn-error', fallback: 5 },
  { name: 'kitchenLateMinutes', input: 'kitchen-late-minutes', error: 'kitchen-late-error', fallback: 10 },
];

/** ctx: {shopPath, applyShop(shop) (the rest of the console follows the shop PATCH answers)}. */
export function createKitchenSettings(ctx) {
  const form = $('kitchen-form');
  /** Edited since last filled: a shop re-read leaves the fields alone. */
  let dirty = false;

  /** Show the shop's values (the server's defaults while it says none). */
  function fill(shop, { force = false } = {}) {
    if (dirty && !force) return;
    for (const f of FIELDS) {
      $(f.input).value = String(Number.isInteger(shop?.[f.name]) ? shop[f.name] : f.fallback);
      fieldError($(f.input), $(f.error), '');
    }
    dirty = false;
  }

  form.addEventListener('input', () => {
    dirty = true;
    status('', '');
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = {};
    for (const f of FIELDS) fieldError($(f.input), $(f.error), '');
    for (const f of [...FIELDS].reverse()) {
      const value = $(f.input).value.trim();
      const n = Number(value);
      if (value === '' || !Number.isInteger(n)) {
        fieldError($(f.input), $(f.error), 'Enter a whole number of minutes.');
        return;
      }
      body[f.name] = n;
    }
    const submit = $('kitchen-save');
    submit.disabled = true;
    status('', 'Saving…');
    try {
      // The same values sent twice set them once: a plain retry is safe.
      const shop = await api(ctx.shopPath, { method: 'PATCH', body, retries: 2 });
      fill(shop, { force: true });
      ctx.applyShop(shop);
      const said = `Saved: amber after ${shop.kitchenWarnMinutes} min, red after ${shop.kitchenLateMinutes} min, on every kitchen screen.`;
      status('ok', said);
      announce(said);
    } catch (err) {
      if (err.status === 401) return;
      const errors = Array.isArray(err.body?.errors) ? err.body.errors : [];
      let shown = false;
      // The first field named gets the focus.
      for (const e of [...errors].reverse()) {
        const f = FIELDS.find((x) => x.name === e.field);
        if (f) {
          fieldError($(f.input), $(f.error), sentence(e.message));
          shown = true;
        }
      }
      status('error', shown ? 'Not saved: see the fields marked.' : `Not saved: ${problemText(err)}`);
    } finally {
      submit.disabled = false;
    }
  });

  function status(kind, text) {
    const el = $('kitchen-status');
    el.dataset.kind = kind;
    el.textContent = text;
  }

  return { fill };
}
