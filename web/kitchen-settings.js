// Kitchen display: its settings.
//
// - Age thresholds (minutes until a ticket turns amber, then red) are the
//   shop's: `kitchenWarnMinutes` / `kitchenLateMinutes` of
//   GET /api/v1/shops/{shopId}, set in the staff console ("Kitchen"). The
//   display reads them on load and on `menu.changed` (every shop PATCH
//   sends one); a screen cannot override them. A shop that does not say
//   gets the server's defaults, 5 and 10.
// - The layout is this screen's: `ordergate.kitchen.settings.<shopId>`
//   (localStorage), so a pass screen can show columns and the line a flow.
//
// Hooks: #settings-open opens dialog#settings-dialog; in its form
// #layout-select, #settings-thresholds (the shop's thresholds, read only),
// #settings-save, #settings-cancel.

import { readStored, writeStored } from './console.js';

export const DEFAULT_THRESHOLDS = Object.freeze({ warnMin: 5, lateMin: 10 });
export const LAYOUTS = ['flow', 'columns'];

function settingsKey(shopId) {
  return `ordergate.kitchen.settings.${shopId}`;
}

/** The shop's thresholds in minutes; the defaults for a value that is not a whole number of minutes. */
export function shopThresholds(shop) {
  const minutes = (n) => Number.isInteger(n) && n >= 1;
  const warnMin = minutes(shop?.kitchenWarnMinutes) ? shop.kitchenWarnMinutes : DEFAULT_THRESHOLDS.warnMin;
  const lateMin = minutes(shop?.kitchenLateMinutes) ? shop.kitchenLateMinutes : DEFAULT_THRESHOLDS.lateMin;
  return { warnMin, lateMin };
}

/** This shop's settings on this device: {layout}. */
export function loadSettings(shopId) {
  const stored = readStored(settingsKey(shopId), {}) || {};
  return { layout: LAYOUTS.includes(stored.layout) ? stored.layout : 'flow' };
}

export function saveSettings(shopId, settings) {
  return writeStored(settingsKey(shopId), { layout: settings.layout });
}

/**
 * Wires the settings dialog. `settings` is the live object (changed in
 * place on save); `thresholds()` gives the shop's thresholds now, shown
 * read only; `onChange(settings, {stored})` runs after a save.
 */
export function initSettingsDialog({ shopId, settings, thresholds, onChange }) {
  const dialog = document.getElementById('settings-dialog');
  const form = document.getElementById('settings-form');
  const layout = document.getElementById('layout-select');
  const opener = document.getElementById('settings-open');

  function fill() {
    layout.value = settings.layout;
    const { warnMin, lateMin } = thresholds();
    document.getElementById('settings-thresholds').textContent =
      `Amber after ${warnMin} min, red after ${lateMin} min.`;
  }

  opener.addEventListener('click', () => {
    fill();
    dialog.showModal();
  });
  document.getElementById('settings-cancel').addEventListener('click', () => dialog.close());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    settings.layout = LAYOUTS.includes(layout.value) ? layout.value : 'flow';
    const stored = saveSettings(shopId, settings);
    dialog.close();
    onChange(settings, { stored });
  });
  dialog.addEventListener('close', () => opener.focus());
  fill();
}
