// Kitchen display: the chime. Synthesised with WebAudio (no audio files).
//
// Browsers only let a page start audio after a user gesture, so the
// AudioContext is created or resumed on one: the sign-in (the token form's
// submit), or any tap or key press on the page when the token was already
// known (a reload). Until then #sound-hint asks for a tap.
//
// Hooks: button#sound-toggle (the mute toggle: aria-pressed="true" when
// muted, remembered on this device), with data-audio = running | suspended |
// unavailable, data-chimes (chimes played) and data-chimes-muted (chimes a
// new ticket or call asked for while muted); each counts requests, also
// when the browser's audio is blocked. Chimes asked for within 700 ms of
// the last one are played once and counted once.

import { loadMuted, saveMuted } from './kitchen-settings.js';

const COALESCE_MS = 700;
/** Notes (Hz) and their start offsets (s): a rising two-tone for a ticket, three quick notes for a call. */
const TUNES = {
  ticket: [
    [880, 0],
    [1318.5, 0.16],
  ],
  service: [
    [1046.5, 0],
    [1046.5, 0.14],
    [1568, 0.28],
  ],
};

export class Chime {
  constructor() {
    this.button = document.getElementById('sound-toggle');
    this.hint = document.getElementById('sound-hint');
    this.muted = loadMuted();
    this.ctx = null;
    this.played = 0;
    this.mutedCount = 0;
    this.last = 0;
    this.button.addEventListener('click', () => this.setMuted(!this.muted));
    // Any gesture may unlock the audio (the first one does).
    const unlock = () => this.unlock();
    document.addEventListener('pointerdown', unlock, { capture: true });
    document.addEventListener('keydown', unlock, { capture: true });
    document.getElementById('token-form')?.addEventListener('submit', unlock, { capture: true });
    this.update();
  }

  /** Create or resume the AudioContext: call it from a user gesture. */
  unlock() {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) {
      this.update();
      return;
    }
    try {
      if (!this.ctx) {
        this.ctx = new Ctx();
        this.ctx.addEventListener('statechange', () => this.update());
      }
      if (this.ctx.state === 'suspended') this.ctx.resume().then(() => this.update(), () => this.update());
    } catch {
      this.ctx = null;
    }
    this.update();
  }

  setMuted(muted) {
    this.muted = muted;
    saveMuted(muted);
    if (!muted) {
      this.unlock();
      this.play('ticket', { preview: true });
    }
    this.update();
  }

  /** A chime for a new ticket ('ticket') or a table's call ('service'). */
  play(kind = 'ticket', { preview = false } = {}) {
    const now = performance.now();
    if (!preview) {
      if (now - this.last < COALESCE_MS) return;
      this.last = now;
      if (this.muted) {
        this.mutedCount += 1;
        this.update();
        return;
      }
      this.played += 1;
      this.update();
    }
    const ctx = this.ctx;
    if (!ctx || ctx.state !== 'running') return;
    try {
      const start = ctx.currentTime + 0.02;
      const master = ctx.createGain();
      master.gain.value = 0.5;
      master.connect(ctx.destination);
      for (const [freq, offset] of TUNES[kind] || TUNES.ticket) {
        const osc = ctx.createOscillator();
        const gain = ctx.createGain();
        osc.type = 'sine';
        osc.frequency.value = freq;
        const t = start + offset;
        gain.gain.setValueAtTime(0.0001, t);
        gain.gain.exponentialRampToValueAtTime(0.8, t + 0.015);
        gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.5);
        osc.connect(gain).connect(master);
        osc.start(t);
        osc.stop(t + 0.55);
      }
    } catch {
      // No sound this time; the counters still tell what was asked for.
    }
  }

  get audioState() {
    if (!(window.AudioContext || window.webkitAudioContext)) return 'unavailable';
    return this.ctx && this.ctx.state === 'running' ? 'running' : 'suspended';
  }

  update() {
    const b = this.button;
    const state = this.audioState;
    b.setAttribute('aria-pressed', this.muted ? 'true' : 'false');
    b.dataset.audio = state;
    b.dataset.chimes = String(this.played);
    b.dataset.chimesMuted = String(this.mutedCount);
    b.title = this.muted
      ? 'Sound is off: new tickets make no chime on this screen.'
      : state === 'running'
        ? 'A chime sounds for each new ticket. Press to mute this screen.'
        : state === 'unavailable'
          ? 'This browser cannot play sound.'
          : 'Sound starts after a tap on the screen.';
    if (this.hint) this.hint.hidden = this.muted || state !== 'suspended';
  }
}
