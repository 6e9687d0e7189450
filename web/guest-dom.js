// guest-dom.js: the small DOM helpers the guest page's modules share.

export const $ = (id) => document.getElementById(id);

/** A DOM element: el('li', {class: 'x', 'data-id': 1}, 'text', child). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value == null) continue;
    if (name === 'class') node.className = value;
    else if (value === true) node.setAttribute(name, '');
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Characters, not UTF-16 units (what the server counts). */
export function chars(text) {
  return [...text].length;
}

let announceTimer = null;
/** Says `text` in the page's polite live region (#announce). */
export function announce(text) {
  const region = $('announce');
  region.textContent = '';
  clearTimeout(announceTimer);
  // A fresh text node after a tick makes screen readers repeat equal texts.
  announceTimer = setTimeout(() => { region.textContent = text; }, 50);
}

/**
 * A photo in a box of fixed proportions (the CSS gives .photo its aspect
 * ratio, so nothing moves when the image arrives), lazy-loaded, with the
 * item's name as its text; without a URL, or when it fails to load, a
 * decorative stand-in that screen readers skip.
 */
export function photo(url, name, { className = '', eager = false } = {}) {
  const box = el('div', { class: `photo ${className}`.trim(), 'data-role': 'photo' });
  const fallback = () => {
    box.replaceChildren(el('span', { class: 'photo-none', 'aria-hidden': 'true' }, initial(name)));
    box.dataset.photo = 'none';
  };
  if (!url) {
    fallback();
    return box;
  }
  const img = el('img', {
    src: url, alt: name, loading: eager ? 'eager' : 'lazy', decoding: 'async', width: 400, height: 300,
  });
  img.addEventListener('error', fallback, { once: true });
  box.dataset.photo = 'image';
  box.append(img);
  return box;
}

function initial(name) {
  const first = [...String(name ?? '').trim()][0];
  return first ? first.toLocaleUpperCase() : '';
}
