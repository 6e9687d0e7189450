// Kitchen display: what this device remembers (localStorage), and the
// settings dialog.
//
// - Age thresholds (minutes until a ticket turns amber, then red) and the
//   layout, per shop: `ordergate.kitchen.settings.<shopId>`. The server has
//   no setting for these yet, so each screen keeps its own.
// - Mute, for the whole device: `ordergate.kitchen.muted` ("1" = muted).
//
// Hooks: #settings-open opens dialog#settings-dialog; in its form
// #warn-minutes, #late-minutes, #layout-select, #settings-error (the field
// problem), #settings-save, #settings-cancel.

export const DEFAULT_SETTINGS = Object.freeze({ warnMin: 5, lateMin: 10, layout: 'flow' });
export const LAYOUTS = ['flow', 'columns'];
const MAX_MINUTES = 240;
const MUTED_KEY = 'ordergate.kitchen.muted';

function settingsKey(shopId) {
  return `ordergate.kitchen.settings.${shopId}`;
}

/** A JSON value from localStorage, or `fallback` when absent, unreadable or refused. */
export function readStored(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** Stores a JSON value; storage refused (private mode, quota) keeps it in memory only. */
export function writeStored(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/** Checks thresholds; returns an error text or ''. */
export function thresholdProblem(warnMin, lateMin) {
  const ok = (n) => Number.isFinite(n) && n >= 1 && n <= MAX_MINUTES && Math.round(n) === n;
  if (!ok(warnMin)) return `Amber: a whole number of minutes from 1 to ${MAX_MINUTES}.`;
  if (!ok(lateMin)) return `Red: a whole number of minutes from 1 to ${MAX_MINUTES}.`;
  if (lateMin <= warnMin) return 'Red must come after amber: give it more minutes.';
  return '';
}

/** This shop's settings on this device (defaults for anything missing or invalid). */
export function loadSettings(shopId) {
  const stored = readStored(settingsKey(shopId), {}) || {};
  const settings = { ...DEFAULT_SETTINGS };
  const warnMin = Number(stored.warnMin);
  const lateMin = Number(stored.lateMin);
  if (!thresholdProblem(warnMin, lateMin)) Object.assign(settings, { warnMin, lateMin });
  if (LAYOUTS.includes(stored.layout)) settings.layout = stored.layout;
  return settings;
}

export function saveSettings(shopId, settings) {
  return writeStored(settingsKey(shopId), {
    warnMin: settings.warnMin,
    lateMin: settings.lateMin,
    layout: settings.layout,
  });
}

export function loadMuted() {
  return readStored(MUTED_KEY, 0) === 1;
}

export function saveMuted(muted) {
  writeStored(MUTED_KEY, muted ? 1 : 0);
}

/**
 * Wires the settings dialog. `settings` is the live object (changed in
 * place on save); `onChange(settings)` runs after a save.
 */
export function initSettingsDialog({ shopId, settings, onChange }) {
  const dialog = document.getElementById('settings-dialog');
  const form = document.getElementById('settings-form');
  const warn = document.getElementById('warn-minutes');
  const late = document.getElementById('late-minutes');
  const layout = document.getElementById('layout-select');
  const error = document.getElementById('settings-error');
  const opener = document.getElementById('settings-open');

  function fill() {
    warn.value = String(settings.warnMin);
    late.value = String(settings.lateMin);
    layout.value = settings.layout;
    showError('', null);
  }

  function showError(text, field) {
    error.textContent = text;
    error.hidden = !text;
    for (const input of [warn, late]) {
      input.setAttribute('aria-invalid', input === field ? 'true' : 'false');
    }
    if (field) field.focus();
  }

  opener.addEventListener('click', () => {
    fill();
    dialog.showModal();
  });
  document.getElementById('settings-cancel').addEventListener('click', () => dialog.close());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const warnMin = Number(warn.value);
    const lateMin = Number(late.value);
    const problem = thresholdProblem(warnMin, lateMin);
    if (problem) {
      const field = problem.startsWith('Amber') ? warn : late;
      showError(problem, field);
      return;
    }
    Object.assign(settings, { warnMin, lateMin, layout: LAYOUTS.includes(layout.value) ? layout.value : 'flow' });
    const stored = saveSettings(shopId, settings);
    dialog.close();
    onChange(settings, { stored });
  });
  dialog.addEventListener('close', () => opener.focus());
  fill();
}
