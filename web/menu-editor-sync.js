// Menu editor (menu-editor.js): loading and saving. Reads the shop (its
// languages and currency) and the catalog with its ETag; saves the whole
// catalog with PUT and If-Match after checking the prices typed; a 412 shows
// #menu-conflict, a 422 the server's problems (menu-editor-errors.js). Also
// the Save and Reload buttons, Ctrl+S / ⌘S, the ask-before-discard and the
// beforeunload guard: everything that talks about the catalog as a whole.

import { announce, ApiProblem, apiResponse, moneyFormatter, problemText } from './console.js';
import { currencyInfo } from './menu-editor-data.js';

export function createSync(ed) {
  const { st, $, root, shopPath, onSaved } = ed;

  async function fetchShop() {
    const { data: shop } = await apiResponse(shopPath, { auth: false, retries: 2 });
    const langs = Array.isArray(shop.languages) && shop.languages.length ? shop.languages : ['en'];
    st.languages = langs.map(String);
    st.languagesDraft = [...st.languages];
    st.currency = shop.currency || 'USD';
    Object.assign(st, currencyInfo(st.currency));
    st.money = moneyFormatter(st.currency);
  }

  async function reload() {
    if (st.loading) return;
    st.loading = true;
    setState('loading');
    status('info', 'Loading the menu…');
    try {
      await fetchShop();
      const res = await apiResponse(`${shopPath}/catalog`, { retries: 2 });
      ed.load(res.data, res.etag);
      st.loaded = true;
      hideConflict();
      $('menu-discard').hidden = true;
      setState('ready');
      status('info', `Loaded version ${st.version}.`);
      ed.renderAll();
    } catch (err) {
      setState(st.loaded ? 'ready' : 'error');
      if (err.status !== 401) status('error', `Could not load the menu: ${problemText(err)}`);
    } finally {
      st.loading = false;
    }
  }

  function setState(state) {
    root.dataset.state = state;
    if (state === 'loading' || state === 'saving') root.setAttribute('aria-busy', 'true');
    else root.removeAttribute('aria-busy');
  }

  function status(kind, text) {
    const el = $('menu-status');
    el.dataset.kind = kind;
    el.textContent = text;
  }

  function localProblems(map) {
    const problems = [];
    const priceMsg = `enter an amount in ${st.currency} like ${ed.priceExample()}${
      st.digits ? ` (at most ${st.digits} decimals)` : ' (no decimals)'
    }`;
    map.items.forEach((m, i) => {
      const item = st.items.get(m.uid);
      if (ed.parseMajor(item.priceInput) === null) {
        problems.push({ field: `items[${i}].price`, message: item.priceInput.trim() ? priceMsg : 'enter a price' });
      }
      item.groups.forEach((g, gi) => {
        g.options.forEach((o, oi) => {
          if (o.priceInput.trim() !== '' && ed.parseMajor(o.priceInput) === null) {
            problems.push({ field: `items[${i}].optionGroups[${gi}].options[${oi}].price`, message: priceMsg });
          }
        });
      });
    });
    st.toppings.forEach((t, i) => {
      if (t.priceInput.trim() !== '' && ed.parseMajor(t.priceInput) === null) {
        problems.push({ field: `toppings[${i}].price`, message: priceMsg });
      }
    });
    return problems;
  }

  async function save() {
    if (!st.loaded || st.saving || st.loading) return;
    const { body, map } = ed.buildCatalog();
    const local = localProblems(map);
    if (local.length) {
      ed.showErrors(local, map, 'The menu was not saved: fix the prices first.');
      return;
    }
    st.saving = true;
    setState('saving');
    $('menu-save').setAttribute('aria-disabled', 'true');
    status('info', 'Saving…');
    try {
      const res = await apiResponse(`${shopPath}/catalog`, {
        method: 'PUT',
        body,
        headers: { 'If-Match': st.etag },
      });
      // Whatever was left out is retired now.
      ed.load(res.data, res.etag, { keep: map });
      hideConflict();
      st.errors = [];
      setState('ready');
      status('ok', `Saved: the menu is at version ${st.version}.`);
      announce(`Menu saved, version ${st.version}.`);
      ed.renderAll();
      onSaved(res.data);
    } catch (err) {
      setState('ready');
      if (err instanceof ApiProblem && err.code === 'CATALOG_VERSION_CONFLICT') {
        showConflict(err.body.currentVersion);
      } else if (err instanceof ApiProblem && err.status === 422 && Array.isArray(err.body.errors)) {
        ed.showErrors(err.body.errors, map, `The menu was not saved: ${err.detail}.`);
      } else if (err.status !== 401) {
        const hint =
          err.status === 0
            ? ' It may or may not have been saved: press Save again (if it was saved, you will be asked to reload).'
            : '';
        status('error', `The menu was not saved: ${problemText(err)}.${hint}`);
        announce(`The menu was not saved: ${problemText(err)}`);
      }
    } finally {
      st.saving = false;
      $('menu-save').removeAttribute('aria-disabled');
      ed.renderDirty();
    }
  }

  function showConflict(currentVersion) {
    const now = currentVersion ?? '?';
    $('menu-conflict-text').textContent =
      `Someone else saved the menu (now version ${now}). Reload it and apply your changes again.`;
    $('menu-conflict').dataset.currentVersion = String(now);
    $('menu-conflict').hidden = false;
    status('error', 'The menu was not saved: it changed since you loaded it.');
    announce(`Not saved. Someone else saved the menu (now version ${now}). Reload it and apply your changes again.`);
    $('menu-conflict-reload').focus();
  }
  function hideConflict() {
    $('menu-conflict').hidden = true;
  }

  $('menu-save').addEventListener('click', () => {
    if ($('menu-save').getAttribute('aria-disabled') === 'true') return;
    save();
  });
  root.addEventListener('keydown', (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault();
      save();
    }
  });

  $('menu-reload').addEventListener('click', () => {
    if (ed.isDirty()) {
      $('menu-discard').hidden = false;
      $('menu-discard-cancel').focus();
      return;
    }
    reload();
  });
  $('menu-discard-confirm').addEventListener('click', () => {
    $('menu-discard').hidden = true;
    st.retired = [];
    reload().then(() => $('menu-reload').focus());
  });
  $('menu-discard-cancel').addEventListener('click', () => {
    $('menu-discard').hidden = true;
    $('menu-reload').focus();
  });
  $('menu-conflict-reload').addEventListener('click', () => {
    st.retired = [];
    reload().then(() => {
      if (st.loaded && $('menu-conflict').hidden) {
        status('info', `Reloaded version ${st.version}. Apply your changes again, then save.`);
        $('menu-save').focus();
      }
    });
  });

  window.addEventListener('beforeunload', (event) => {
    if (ed.isDirty()) {
      event.preventDefault();
      event.returnValue = '';
    }
  });

  return { reload, status };
}
