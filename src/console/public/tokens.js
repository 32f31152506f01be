// API tokens: create (the full token is shown once), list, activate/deactivate, delete.

import { $, api, copyText, el, formatDate, onSubmit, poll, showError, stackPath, timeAgo } from './common.js';

async function load() {
  const { tokens } = await api('GET', `${stackPath}/tokens`);
  $('#tokens-empty').hidden = tokens.length > 0;
  $('#tokens-list').replaceChildren(...tokens.map(row));
}

function row(t) {
  return el(
    'tr',
    { 'data-token-id': t.id, 'data-testid': 'token-row', class: t.active ? '' : 'inactive' },
    el('td', { class: 'label' }, t.label),
    el('td', {}, el('code', { class: 'prefix' }, `${t.prefix}…`)),
    el('td', {}, el('span', { class: t.active ? 'badge on' : 'badge off', 'data-testid': 'token-status' }, t.active ? 'active' : 'inactive')),
    el('td', {}, formatDate(t.createdAt)),
    el('td', {}, timeAgo(t.lastUsedAt)),
    el(
      'td',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'data-action': 'toggle',
          onclick: () => act(() => api('PATCH', `${stackPath}/tokens/${encodeURIComponent(t.id)}`, { active: !t.active })),
        },
        t.active ? 'Deactivate' : 'Activate',
      ),
      el(
        'button',
        {
          type: 'button',
          class: 'danger',
          'data-action': 'delete',
          onclick: () => {
            if (confirm(`Delete token "${t.label}" (${t.prefix}…)? Clients using it stop working at once.`)) {
              act(() => api('DELETE', `${stackPath}/tokens/${encodeURIComponent(t.id)}`));
            }
          },
        },
        'Delete',
      ),
    ),
  );
}

async function act(work) {
  try {
    await work();
    await refresh();
  } catch (err) {
    showError(err);
  }
}

const refresh = poll(load, 10_000);

onSubmit($('#token-form'), async (f) => {
  const created = await api('POST', `${stackPath}/tokens`, { label: String(f.get('label')).trim() });
  $('#token-created').textContent = created.token;
  $('#copy-status').textContent = '';
  $('#token-created-box').hidden = false;
  $('#token-form').reset();
  await refresh();
});

$('#copy-token').addEventListener('click', async () => {
  try {
    await copyText($('#token-created').textContent);
    $('#copy-status').textContent = 'Copied';
  } catch (err) {
    $('#copy-status').textContent = err.message;
  }
});
