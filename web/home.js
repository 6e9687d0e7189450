// The start page, `/`: sign in (an account, or a token), then the shops the
// credential works in, each with links to its staff console and kitchen
// display (what the role may open). The platform administrator also sets
// up a restaurant here: creates the shop, then follows the steps into its
// console. Nothing is shown before signing in.
//
// Test hooks (plus console.js's sign-in hooks):
//   #shop-list li[data-shop-id]  a shop: .shop-name, [data-role=role]
//                          (the credential's role there, "administrator"),
//                          a[data-action=staff], a[data-action=kitchen]
//   #shops-empty           shown when there is none
//   #new-shop              the administrator's "Set up a restaurant":
//                          #shop-form (#shop-name-input, #shop-currency,
//                          #shop-timezone, its submit), #shop-form-error

import { announce, api, h, problemText, showProblem, uuidv4, withStaffSignIn } from './console.js';
import { $ } from './staff-dom.js';

let me = null;
// A shop being created keeps its key across retries of the same form.
let shopKey = uuidv4();

/** `signedIn`: the sign-in's `GET /auth/me`, who this credential is. */
async function load(_, signedIn) {
  me = signedIn;
  try {
    const { shops } = await api('/api/v1/shops');
    render(shops);
  } catch (err) {
    if (err.status !== 401) showProblem(err);
  }
}

function render(shops) {
  const roles = new Map((me.shops || []).map((s) => [s.shopId, s]));
  $('shops-empty').hidden = shops.length > 0;
  $('shop-list').replaceChildren(
    ...shops.map((shop) => {
      const rights = roles.get(shop.shopId);
      const role = me.kind === 'admin' ? 'administrator' : rights?.role || '';
      const may = me.kind === 'admin' ? null : new Set(rights?.may || []);
      const id = encodeURIComponent(shop.shopId);
      // A kitchen account or display has nothing in the console but the calls.
      const console_ = !may || [...may].some((d) => d !== 'kitchen' && d !== 'service');
      return h(
        'li',
        { 'data-shop-id': shop.shopId, class: 'card shop-item' },
        h('span', { class: 'shop-name' }, shop.name),
        h('span', { 'data-role': 'role', class: 'hint' }, role),
        console_ && h('a', { href: `/staff/${id}`, 'data-action': 'staff', class: 'btn' }, 'Staff console'),
        h('a', { href: `/kitchen/${id}`, 'data-action': 'kitchen', class: 'btn' }, 'Kitchen display'),
      );
    }),
  );
  $('new-shop').hidden = me.kind !== 'admin';
}

$('shop-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = $('shop-form-error');
  error.textContent = '';
  const body = {
    name: $('shop-name-input').value.trim(),
    currency: $('shop-currency').value.trim().toUpperCase(),
  };
  const timezone = $('shop-timezone').value.trim();
  if (timezone) body.timezone = timezone;
  try {
    const shop = await api('/api/v1/shops', { method: 'POST', body, key: shopKey, retries: 2 });
    shopKey = uuidv4();
    $('shop-name-input').value = '';
    announce(`${shop.name} was created. Open its staff console to write the menu and add the tables.`);
    await load(null, me);
  } catch (err) {
    const fields = Array.isArray(err.body?.errors) ? err.body.errors.map((e) => `${e.field} ${e.message}`) : [];
    error.textContent = fields.length ? fields.join('; ') : problemText(err);
  }
});

withStaffSignIn({ shopId: null, start: load, stop: () => {} });
