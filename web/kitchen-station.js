// Kitchen display: stations. `/kitchen/{shopId}?station=bar` shows only the
// lines whose catalog item has `station: "bar"` (compared without case or
// surrounding spaces); a ticket with none of them is not shown, and a ticket
// shown says how many of its items are for other stations. Without
// `?station` every line shows. The item → station map comes from the staff
// catalog (GET /api/v1/shops/{shopId}/catalog) and is read again on
// `menu.changed`. If it cannot be read, every line shows and the page says so.
//
// Hooks: #station-name (the station this screen is for, or "All stations"),
// select#station-select (picks one: its options' values are the catalog's
// stations, "" for all; changing it updates ?station= without a reload),
// body[data-station] (the chosen station, absent for all).

import { api, clearProblem, h, problemText, showProblem } from './console.js';

function norm(station) {
  return typeof station === 'string' ? station.trim().toLowerCase() : '';
}

export class Stations {
  constructor(shopId, onChange) {
    this.shopId = shopId;
    this.onChange = onChange;
    this.wanted = norm(new URLSearchParams(location.search).get('station'));
    this.byItem = new Map();
    this.names = new Map(); // normalised → as the catalog spells it
    this.loaded = false;
    this.failed = false;
    this.select = document.getElementById('station-select');
    this.select.addEventListener('change', () => this.choose(this.select.value));
    this.update();
  }

  /** Re-read the catalog's stations. */
  async load() {
    try {
      const catalog = await api(`/api/v1/shops/${encodeURIComponent(this.shopId)}/catalog`, { retries: 2 });
      this.byItem = new Map();
      this.names = new Map();
      for (const item of catalog.items || []) {
        const station = norm(item.station);
        this.byItem.set(item.menuItemId, station);
        if (station && !this.names.has(station)) this.names.set(station, item.station.trim());
      }
      this.loaded = true;
      this.failed = false;
      clearProblem('stations');
    } catch (err) {
      if (err.status === 401) return;
      this.failed = true;
      if (this.wanted) {
        showProblem(
          `Could not read the catalog's stations (${problemText(err)}): ` +
            `every line is shown, not only the ${this.label.toLowerCase()}'s.`,
          'stations',
        );
      }
    }
    this.update();
    this.onChange();
  }

  /** The chosen station as the catalog spells it ("" for all). */
  get label() {
    if (!this.wanted) return 'All stations';
    const name = this.names.get(this.wanted) || this.wanted;
    return `${name.charAt(0).toUpperCase()}${name.slice(1)} station`;
  }

  get filtering() {
    return Boolean(this.wanted) && this.loaded && !this.failed;
  }

  /** Whether a ticket line belongs on this screen. */
  lineShown(line) {
    if (!this.filtering) return true;
    return this.byItem.get(line.menuItemId) === this.wanted;
  }

  choose(value) {
    this.wanted = norm(value);
    const url = new URL(location.href);
    if (this.wanted) url.searchParams.set('station', this.names.get(this.wanted) || this.wanted);
    else url.searchParams.delete('station');
    history.replaceState(history.state, '', url);
    this.update();
    this.onChange({ switched: true });
  }

  update() {
    const name = document.getElementById('station-name');
    name.textContent = this.label;
    if (this.wanted) document.body.dataset.station = this.wanted;
    else delete document.body.dataset.station;
    const known = [...this.names].sort((a, b) => a[1].localeCompare(b[1]));
    if (this.wanted && !this.names.has(this.wanted)) known.push([this.wanted, this.wanted]);
    const options = [
      h('option', { value: '', text: 'All stations' }),
      ...known.map(([value, text]) => h('option', { value, text })),
    ];
    this.select.replaceChildren(...options);
    this.select.value = this.wanted;
    const note = document.getElementById('station-note');
    if (note) {
      note.textContent =
        this.wanted && this.loaded && !this.names.has(this.wanted)
          ? `No catalog item is for the station "${this.wanted}": nothing will show here.`
          : '';
      note.hidden = !note.textContent;
    }
  }
}
