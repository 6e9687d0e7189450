// Staff console: QR codes as SVG (web/vendor/qrcode.mjs makes the matrix).

import qrcode from './vendor/qrcode.mjs';

/**
 * The QR code of `text` as an <svg role=img> labelled `label`: one path of
 * dark modules on white, a quiet zone of 4 modules, error correction M
 * (a card survives a stain).
 */
export function qrSvg(text, label) {
  const qr = qrcode(0, 'M');
  // The library takes one byte per character: give it the UTF-8 bytes.
  qr.addData(String.fromCharCode(...new TextEncoder().encode(text)), 'Byte');
  qr.make();
  const count = qr.getModuleCount();
  const margin = 4;
  const size = count + margin * 2;
  let d = '';
  for (let row = 0; row < count; row += 1) {
    for (let col = 0; col < count; col += 1) {
      if (qr.isDark(row, col)) d += `M${col + margin} ${row + margin}h1v1h-1z`;
    }
  }
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', label);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('class', 'qr-svg');
  svg.dataset.modules = String(count);
  const bg = document.createElementNS(ns, 'rect');
  bg.setAttribute('width', String(size));
  bg.setAttribute('height', String(size));
  bg.setAttribute('fill', '#ffffff');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000000');
  svg.append(bg, path);
  return svg;
}
