// The stack list and "new stack".

import { $, api, el, formatDate, onSubmit, poll } from './common.js';

async function load() {
  const { stacks } = await api('GET', '/stacks');
  const rows = stacks.map((s) =>
    el(
      'tr',
      { 'data-stack-id': s.id },
      el(
        'td',
        {},
        el('a', { href: `/stacks/${encodeURIComponent(s.id)}`, 'data-testid': 'stack-link' }, s.name),
        s.disabled ? el('span', { class: 'badge off' }, 'disabled') : '',
      ),
      el('td', { class: 'muted' }, s.description ?? ''),
      el('td', {}, formatDate(s.createdAt)),
    ),
  );
  $('#stacks-list').replaceChildren(...rows);
}

poll(load, 30_000);

onSubmit($('#new-stack-form'), async (f) => {
  const description = String(f.get('description') ?? '').trim();
  const stack = await api('POST', '/stacks', { name: String(f.get('name')).trim(), description: description || null });
  location.assign(`/stacks/${encodeURIComponent(stack.id)}`);
});
