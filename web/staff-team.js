// Staff console: the shop's people and devices. An owner adds staff (a new
// account with a password, or an existing account by its username), gives
// them a role and removes them (GET/POST/DELETE …/staff); an owner or a
// manager creates kitchen displays and floor tablets and revokes them
// (GET/POST/DELETE …/devices). A new device's token is shown once, as a
// sign-in link and its QR code: the display scans it (or opens the link)
// and stays signed in until revoked. Hooks are listed in staff.js ("Staff
// and devices"). The texts below have no DOM, so Node can test them
// (web/test/staff-team.test.mjs).

import { api, announce, formatDateTime, h, problemText } from './console.js';
import { $, fieldError, replaceRows, sentence } from './staff-dom.js';
import { qrSvg } from './staff-qr.js';

export const ROLE_LABEL = {
  owner: 'Owner',
  manager: 'Manager',
  floor: 'Floor',
  kitchen: 'Kitchen',
};

/**
 * The page a device signs in on with its token: a kitchen display opens
 * the kitchen display, a floor tablet the staff console. The token rides
 * in the fragment, which browsers never send to a server.
 */
export function deviceLink(origin, shopId, device) {
  const page = device.role === 'kitchen' ? 'kitchen' : 'staff';
  return `${origin}/${page}/${encodeURIComponent(shopId)}#device=${encodeURIComponent(device.token)}`;
}

/** "Kitchen display", "Floor tablet". */
export function deviceKind(role) {
  return role === 'kitchen' ? 'Kitchen display' : 'Floor tablet';
}

/** ctx: {shopId, shopPath, rights: () => {may: Set}}. */
export function createTeam({ shopId, shopPath, rights }) {
  let members = [];
  let devices = [];

  const may = (duty) => rights().may.has(duty);

  async function load() {
    const reads = [];
    if (may('staff')) reads.push(api(`${shopPath}/staff`, { retries: 1 }).then((r) => (members = r.staff)));
    if (may('devices')) reads.push(api(`${shopPath}/devices`, { retries: 1 }).then((r) => (devices = r.devices)));
    try {
      await Promise.all(reads);
      $('team-error').textContent = '';
    } catch (err) {
      if (err.status === 401) return;
      $('team-error').textContent = `Could not read the staff and devices: ${problemText(err)}`;
    }
    render();
  }

  /** Shows only the halves the credential may see. */
  function applyRights() {
    $('members-part').hidden = !may('staff');
    $('devices-part').hidden = !may('devices');
  }

  function render() {
    applyRights();
    $('members-empty').hidden = members.length > 0;
    replaceRows($('member-list'), members.map(memberRow), 'accountId');
    $('devices-empty').hidden = devices.length > 0;
    replaceRows($('device-list'), devices.map(deviceRow), 'deviceId');
  }

  function memberRow(member) {
    const message = h('p', { 'data-role': 'row-message', class: 'row-message' });
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-small btn-quiet',
        'data-action': 'remove',
        onclick: () => removeMember(member, remove, message),
      },
      'Remove',
    );
    return h(
      'tr',
      { 'data-account-id': member.accountId, 'data-username': member.username, 'data-role': member.role },
      h('td', {}, member.username),
      h('td', {}, ROLE_LABEL[member.role] || member.role),
      h('td', { class: 'actions' }, remove, message),
    );
  }

  function deviceRow(device) {
    const message = h('p', { 'data-role': 'row-message', class: 'row-message' });
    const revoke = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-small btn-quiet',
        'data-action': 'revoke',
        onclick: () => revokeDevice(device, revoke, message),
      },
      'Revoke',
    );
    return h(
      'tr',
      { 'data-device-id': device.deviceId, 'data-device-name': device.name, 'data-role': device.role },
      h('td', {}, device.name),
      h('td', {}, deviceKind(device.role)),
      h('td', {}, formatDateTime(device.createdAt)),
      h('td', { class: 'actions' }, revoke, message),
    );
  }

  async function removeMember(member, button, message) {
    if (!confirm(`Remove ${member.username} from this shop? They are signed out of it at once.`)) return;
    button.disabled = true;
    try {
      await api(`${shopPath}/staff/${encodeURIComponent(member.accountId)}`, { method: 'DELETE', retries: 1 });
      announce(`${member.username} was removed.`);
      await load();
    } catch (err) {
      button.disabled = false;
      message.dataset.kind = 'error';
      message.textContent = problemText(err);
    }
  }

  async function revokeDevice(device, button, message) {
    if (!confirm(`Revoke “${device.name}”? It is signed out at once and needs a new link to sign in again.`)) return;
    button.disabled = true;
    try {
      await api(`${shopPath}/devices/${encodeURIComponent(device.deviceId)}`, { method: 'DELETE', retries: 1 });
      announce(`${device.name} was revoked.`);
      if ($('device-token-card').dataset.deviceId === device.deviceId) hideToken();
      await load();
    } catch (err) {
      button.disabled = false;
      message.dataset.kind = 'error';
      message.textContent = problemText(err);
    }
  }

  async function addMember(event) {
    event.preventDefault();
    const username = $('member-username');
    const password = $('member-password');
    const error = $('member-error');
    fieldError(username, error, '');
    const body = { username: username.value.trim(), role: $('member-role').value };
    if (password.value) body.password = password.value;
    try {
      const member = await api(`${shopPath}/staff`, { method: 'POST', body });
      password.value = '';
      username.value = '';
      announce(`${member.username} is now ${ROLE_LABEL[member.role].toLowerCase()} here.`);
      await load();
    } catch (err) {
      const field = err.body?.errors?.[0]?.field === 'password' ? password : username;
      const detail = err.body?.errors?.length ? err.body.errors.map((e) => sentence(`${e.field} ${e.message}`)).join(' ') : '';
      const text =
        err.code === 'NOT_FOUND'
          ? 'No account has that username: give a password to create one.'
          : detail || problemText(err);
      fieldError(field, error, text);
    }
  }

  async function addDevice(event) {
    event.preventDefault();
    const name = $('device-name');
    const error = $('device-error');
    fieldError(name, error, '');
    try {
      const device = await api(`${shopPath}/devices`, {
        method: 'POST',
        body: { name: name.value.trim(), role: $('device-role').value },
      });
      name.value = '';
      showToken(device);
      await load();
    } catch (err) {
      fieldError(name, error, problemText(err));
    }
  }

  /** The new device's sign-in link and QR code, shown this once. */
  function showToken(device) {
    const link = deviceLink(location.origin, shopId, device);
    const card = $('device-token-card');
    card.dataset.deviceId = device.deviceId;
    $('device-token-name').textContent = device.name;
    $('device-token-kind').textContent = deviceKind(device.role).toLowerCase();
    $('device-link').value = link;
    $('device-qr').replaceChildren(qrSvg(link, `Sign-in code for ${device.name}`));
    $('device-qr').dataset.link = link;
    card.hidden = false;
    card.focus();
    announce(`${device.name} was created. Scan its code on the device now: it is shown only once.`);
  }

  function hideToken() {
    const card = $('device-token-card');
    card.hidden = true;
    delete card.dataset.deviceId;
    $('device-link').value = '';
    $('device-qr').replaceChildren();
  }

  $('member-form').addEventListener('submit', addMember);
  $('device-form').addEventListener('submit', addDevice);
  $('device-token-done').addEventListener('click', hideToken);
  $('device-link-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText($('device-link').value);
      announce('The link was copied.');
    } catch {
      $('device-link').select();
    }
  });

  return { load };
}
