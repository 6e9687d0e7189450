// Menu editor (menu-editor.js): an item's photo: its preview, the upload
// (POST …/images with the file's bytes; the item takes the imageId, which is
// saved with the menu) with its status, and removing it. Kept apart because
// it is the one part of the item form that talks to the server by itself.

import { announce, ApiProblem, apiResponse, h, problemText } from './console.js';
import { restoreFocus } from './menu-editor-dom.js';

export function createPhoto(ed) {
  const { st, $, shopPath } = ed;

  function photoField(item, p) {
    const id = ed.fieldId();
    const statusId = `${id}-status`;
    const name = ed.displayText(item.name) || 'the new item';
    return h(
      'fieldset',
      { class: 'photo-field', dataset: { errorKey: `${p}:imageId:` } },
      h('legend', { text: 'Photo' }),
      h(
        'div',
        { class: 'photo-row' },
        item.imageUrl
          ? h('img', {
              class: 'photo-preview',
              src: item.imageUrl,
              alt: `Photo of ${name}`,
              dataset: { role: 'photo-preview', imageId: item.imageId || '' },
            })
          : h('div', { class: 'photo-none', dataset: { role: 'photo-none' }, text: 'No photo' }),
        h(
          'div',
          { class: 'photo-tools' },
          h('label', { for: id, text: item.imageUrl ? 'Replace the photo' : 'Upload a photo' }),
          h('input', {
            id,
            type: 'file',
            accept: 'image/jpeg,image/png,image/webp',
            'aria-describedby': `${id}-hint ${statusId}`,
            disabled: item.photo.busy,
            dataset: { field: 'photo', key: 'photo' },
            onchange: (event) => uploadPhoto(item, event.target),
          }),
          h('p', {
            id: `${id}-hint`,
            class: 'hint',
            text: 'JPEG, PNG or WebP, up to 1 MiB. Guests see it on their phones.',
          }),
          item.imageUrl
            ? h('button', {
                type: 'button',
                class: 'btn btn-small btn-quiet',
                dataset: { action: 'remove-photo', key: 'remove-photo' },
                onclick: () => {
                  item.imageId = null;
                  item.imageUrl = null;
                  item.photo = { busy: false, message: 'Photo removed (at the next save).', kind: 'info' };
                  ed.changed();
                  ed.renderDetail();
                },
                text: 'Remove the photo',
              })
            : null,
          h('p', {
            id: statusId,
            class: `photo-status ${item.photo.kind === 'error' ? 'field-error' : 'hint'}`,
            role: 'status',
            dataset: { role: 'photo-status', kind: item.photo.kind },
            text: item.photo.message,
          }),
        ),
      ),
    );
  }

  async function uploadPhoto(item, input) {
    const file = input.files && input.files[0];
    if (!file) return;
    item.photo = { busy: true, message: `Uploading ${file.name}…`, kind: 'info' };
    rerenderIfShown(item);
    try {
      const bytes = await file.arrayBuffer();
      const res = await apiResponse(`${shopPath}/images`, {
        method: 'POST',
        rawBody: bytes,
        contentType: file.type || 'application/octet-stream',
      });
      const image = res.data || {};
      item.imageId = image.imageId;
      item.imageUrl = image.url || `/images/${encodeURIComponent(image.imageId)}`;
      const size = image.width && image.height ? ` (${image.width}×${image.height})` : '';
      item.photo = { busy: false, message: `Uploaded${size}. It is on the menu once you save.`, kind: 'ok' };
      announce('Photo uploaded. Save the menu to show it to guests.');
      ed.changed();
    } catch (err) {
      const why = err instanceof ApiProblem ? `${problemText(err)} (HTTP ${err.status} ${err.code})` : problemText(err);
      item.photo = { busy: false, message: `The photo was not accepted: ${why}`, kind: 'error' };
      if (err.status !== 401) announce(item.photo.message);
    }
    rerenderIfShown(item, 'photo');
  }

  function rerenderIfShown(item, focusKey) {
    if (st.selection?.kind === 'item' && st.selection.uid === item.uid) {
      ed.renderDetail();
      if (focusKey) restoreFocus($('menu-detail'), focusKey);
    }
  }

  return { photoField };
}
