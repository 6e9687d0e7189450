// Staff console: the floor. The shop's tables, made once (POST /api/v1/
// shops/{shopId}/tables) and listed with their state (GET …/tables: free,
// or seated with the session of the party there); "Seat" on a free table
// opens a session for it (POST …/sessions {"tableId"}) and shows its PIN big
// on the table card, for staff to tell the party. Each table has a QR card
// of its permanent `tableUrl` (the table's name big, the code, "Scan to
// order" in the shop's languages) to print once: one card to a page, or
// all of them on sheets to cut out. Hooks are listed in staff.js ("Floor").

import { api, announce, clearProblem, formatDateTime, h, problemText, showProblem } from './console.js';
import { $, fieldError, printOnly, replaceRows } from './staff-dom.js';
import { qrSvg } from './staff-qr.js';
import { rowId } from './staff-sessions.js';

/**
 * "Scan to order" in the languages the console knows it in, by primary
 * subtag; a card says it in each of the shop's languages found here
 * (English when none is).
 */
const SCAN_TO_ORDER = {
  en: 'Scan to order',
  ja: 'スキャンしてご注文',
  zh: '扫码点餐',
  ko: '스캔하여 주문',
  fr: 'Scannez pour commander',
  de: 'Scannen und bestellen',
  es: 'Escanee para pedir',
  it: 'Inquadra per ordinare',
  pt: 'Digitalize para pedir',
  nl: 'Scan om te bestellen',
};

/** The "Scan to order" texts for `languages` (BCP 47 tags): [{lang, text}], never empty. */
export function scanTexts(languages) {
  const seen = new Set();
  const out = [];
  for (const tag of languages ?? []) {
    const primary = String(tag).toLowerCase().split('-')[0];
    if (SCAN_TO_ORDER[primary] && !seen.has(primary)) {
      seen.add(primary);
      out.push({ lang: tag, text: SCAN_TO_ORDER[primary] });
    }
  }
  return out.length ? out : [{ lang: 'en', text: SCAN_TO_ORDER.en }];
}

/**
 * ctx: {shopPath, keys (IntentKeys), sessions (Map by id), languages() (the
 * shop's), opened(session) (the sessions part shows its card),
 * focusSession(sessionId) (to its row; false if not listed), refreshSoon()}.
 */
export function createFloor(ctx) {
  const { shopPath, keys, sessions } = ctx;
  /** Tables by id. */
  let tables = new Map();
  const messages = new Map();

  async function load() {
    try {
      const list = await api(`${shopPath}/tables`, { retries: 2 });
      tables = new Map(list.tables.map((t) => [t.tableId, t]));
      render();
      clearProblem('floor');
    } catch (err) {
      if (err.status !== 401) showProblem(`Could not load the floor: ${problemText(err)}`, 'floor');
    }
  }

  function sorted() {
    return [...tables.values()].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
  }

  /**
   * A table's party: the listed session, or an open one of the same name
   * (a table's session is the active one labelled with its name, so a table
   * opened by name is seated too, before the next list read).
   */
  function seatedSession(table) {
    const byId = table.sessionId && sessions.get(table.sessionId);
    if (byId && byId.status === 'active') return byId;
    for (const s of sessions.values()) if (s.status === 'active' && s.tableLabel === table.name) return s;
    // Listed seated, by a session this page has not read yet (unless it
    // was checked out since the list was read).
    return table.sessionId && !byId ? { sessionId: table.sessionId, tableLabel: table.name } : null;
  }

  function render() {
    const list = sorted();
    replaceRows($('floor-list'), list.map(floorRow), 'tableId');
    $('floor-count').textContent = String(list.length);
    $('floor-empty').hidden = list.length > 0;
    $('floor-seated').textContent = String(list.filter((t) => seatedSession(t)).length);
    renderCards(list);
  }

  function floorRow(table) {
    const seated = seatedSession(table);
    const message = messages.get(table.tableId);
    return h(
      'tr',
      {
        dataset: {
          tableId: table.tableId,
          tableName: table.name,
          state: seated ? 'seated' : 'free',
          sessionId: seated ? seated.sessionId : null,
        },
        class: seated ? 'is-seated' : null,
      },
      h('th', { scope: 'row', class: 'table-label', text: table.name }),
      h(
        'td',
        { dataset: { role: 'state' } },
        seated
          ? h(
              'span',
              { class: 'floor-state floor-seated' },
              'Seated',
              seated.openedAt ? h('time', { datetime: seated.openedAt, text: ` since ${formatDateTime(seated.openedAt)}` }) : null,
            )
          : h('span', { class: 'floor-state floor-free', text: 'Free' }),
      ),
      h(
        'td',
        { class: 'actions' },
        seated
          ? h('a', {
              class: 'btn btn-small',
              href: `#${rowId(seated.sessionId)}`,
              dataset: { action: 'go-to-session' },
              'aria-label': `Go to the open table ${table.name}`,
              text: 'Open table',
            })
          : h('button', {
              type: 'button',
              class: 'btn btn-small btn-primary',
              dataset: { action: 'seat' },
              'aria-label': `Seat a party at table ${table.name}`,
              text: 'Seat',
            }),
        h('button', {
          type: 'button',
          class: 'btn btn-small',
          dataset: { action: 'show-card' },
          'aria-label': `Show the QR card of table ${table.name}`,
          text: 'QR card',
        }),
      ),
      h(
        'td',
        { class: 'row-message-cell' },
        h('span', {
          class: 'row-message',
          dataset: { role: 'row-message', kind: message?.kind ?? '' },
          text: message?.text ?? '',
        }),
      ),
    );
  }

  $('floor-list').addEventListener('click', (event) => {
    const control = event.target.closest('[data-action]');
    const row = control?.closest('tr[data-table-id]');
    const table = row && tables.get(row.dataset.tableId);
    if (!table) return;
    if (control.dataset.action === 'seat') seat(table, control);
    else if (control.dataset.action === 'show-card') showCard(table);
    else if (control.dataset.action === 'go-to-session') {
      event.preventDefault();
      if (!ctx.focusSession(row.dataset.sessionId)) ctx.refreshSoon();
    }
  });

  async function seat(table, button) {
    const intent = `seat:${table.tableId}`;
    button.disabled = true;
    setMessage(table, null);
    try {
      const session = await api(`${shopPath}/sessions`, {
        method: 'POST',
        body: { tableId: table.tableId },
        key: keys.get(intent),
        retries: 2,
      });
      keys.forget(intent);
      tables.set(table.tableId, { ...table, sessionId: session.sessionId });
      ctx.opened(session);
    } catch (err) {
      if (!err.retryable) keys.forget(intent);
      button.disabled = false;
      if (err.status === 401) return;
      setMessage(table, {
        kind: 'error',
        text: err.code === 'TABLE_OCCUPIED' ? `Seated already: ${problemText(err)}` : problemText(err),
      });
      announce(`Table ${table.name}: ${problemText(err)}`);
      if (err.code === 'TABLE_OCCUPIED') ctx.refreshSoon();
    }
  }

  function setMessage(table, message) {
    if (message) messages.set(table.tableId, message);
    else messages.delete(table.tableId);
    render();
  }

  // ── adding tables ──

  $('create-table-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = $('new-table-name');
    const error = $('create-table-error');
    const submit = event.target.querySelector('button[type=submit]');
    fieldError(input, error, '');
    submit.disabled = true;
    try {
      // The server judges the name (1–32 characters, one per shop): its
      // refusal is shown on the field. No automatic retry: a name sent
      // twice is refused the second time.
      const table = await api(`${shopPath}/tables`, { method: 'POST', body: { name: input.value.trim() } });
      tables.set(table.tableId, table);
      input.value = '';
      render();
      input.focus();
      announce(`Table ${table.name} added. Its QR card is ready to print.`);
    } catch (err) {
      if (err.status === 401) return;
      const field = (err.body?.errors ?? []).find((e) => e.field === 'name');
      fieldError(input, error, field ? `The name ${field.message}.` : problemText(err));
      // Made by someone else, or by this press's first try: show it.
      if (err.code === 'TABLE_NAME_TAKEN' || err.status === 0) load();
    } finally {
      submit.disabled = false;
    }
  });

  // ── QR cards ──

  function renderCards(list) {
    const languages = ctx.languages();
    const box = $('table-cards');
    const existing = new Map([...box.children].map((el) => [el.dataset.tableId, el]));
    const cards = list.map((table) => {
      const stamp = `${table.name}|${table.tableUrl}|${languages.join(',')}`;
      const known = existing.get(table.tableId);
      if (known && known.dataset.stamp === stamp) return known;
      const card = qrCard(table, languages);
      card.dataset.stamp = stamp;
      return card;
    });
    box.replaceChildren(...cards);
    $('table-cards-count').textContent = String(list.length);
    $('print-cards').disabled = list.length === 0;
  }

  function qrCard(table, languages) {
    const titleId = `qr-card-name-${table.tableId}`;
    const svg = qrSvg(table.tableUrl, `QR code for table ${table.name}`);
    svg.dataset.tableUrl = table.tableUrl;
    return h(
      'article',
      { class: 'qr-card', dataset: { tableId: table.tableId }, 'aria-labelledby': titleId, tabindex: '-1' },
      h('h4', { class: 'qr-card-name', id: titleId, text: table.name }),
      h('div', { class: 'qr qr-card-code', dataset: { tableUrl: table.tableUrl } }, svg),
      h(
        'p',
        { class: 'qr-card-scan' },
        scanTexts(languages).flatMap(({ lang, text }, i) => [i ? ' · ' : null, h('span', { lang, text })]),
      ),
      h('p', { class: 'qr-card-url', text: table.tableUrl }),
      h('button', {
        type: 'button',
        class: 'btn btn-small qr-card-print',
        dataset: { action: 'print-card' },
        'aria-label': `Print the card of table ${table.name}`,
        text: 'Print this card',
      }),
    );
  }

  function showCard(table) {
    $('table-cards-box').open = true;
    const card = $('table-cards').querySelector(`[data-table-id="${table.tableId}"]`);
    if (!card) return;
    card.scrollIntoView({ block: 'nearest' });
    card.focus({ preventScroll: true });
  }

  $('table-cards').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action=print-card]');
    const card = button?.closest('.qr-card');
    if (card) printCards([card], { single: true });
  });

  $('print-cards').addEventListener('click', () => printCards([...$('table-cards').children], { single: false }));

  /**
   * Print cards through #print-sheet, a top-level copy the print CSS shows
   * alone (everything else is display: none, so no blank pages follow):
   * one card to a page, or sheets of cards to cut out.
   */
  function printCards(cards, { single }) {
    const sheet = $('print-sheet');
    sheet.classList.toggle('is-single', single);
    sheet.replaceChildren(
      ...cards.map((card) => {
        const copy = card.cloneNode(true);
        copy.removeAttribute('tabindex');
        copy.querySelector('.qr-card-print')?.remove();
        // Ids stay unique: the copy is labelled by its own heading.
        const heading = copy.querySelector('.qr-card-name');
        heading.id = `print-${heading.id}`;
        copy.setAttribute('aria-labelledby', heading.id);
        return copy;
      }),
    );
    window.addEventListener('afterprint', () => sheet.replaceChildren(), { once: true });
    printOnly('print-cards');
  }

  return { load, render };
}
