// Elastic Nodes: the stack's endpoint URLs, RPC Analytics (window, token filter, per-method
// table, time series) and the stack's transaction landing per node (docs/landing.md "Where
// they show").

import { $, api, copyText, el, formatCount, formatMs, formatPct, formatSlots, poll, stackPath } from './common.js';
import { lineChart, setData } from './charts.js';

const { httpBase, wsBase } = document.body.dataset;
const TOKEN_RE = /^[A-Za-z0-9._~-]+$/;

function showEndpoints() {
  const typed = $('#endpoint-token').value.trim();
  const token = typed && TOKEN_RE.test(typed) ? typed : '<TOKEN>';
  $('#endpoint-http').textContent = `${httpBase}/api-token/${token}`;
  $('#endpoint-ws').textContent = `${wsBase}/api-token/${token}/`;
  $('#endpoint-http-base').textContent = httpBase;
}
$('#endpoint-token').addEventListener('input', showEndpoints);
showEndpoints();

for (const button of document.querySelectorAll('button.copy')) {
  button.addEventListener('click', async () => {
    const text = $('#' + button.dataset.copy).textContent;
    try {
      await copyText(text);
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed';
    }
    setTimeout(() => (button.textContent = 'Copy'), 1500);
  });
}

const chart = lineChart($('#analytics-chart'));
const formats = {
  '1h': new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }),
  '24h': new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }),
  '7d': new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit' }),
};
let tokensLoadedAt = 0;

/** Keeps the token filter in step with the stack's tokens (every 30 s), keeping the choice. */
async function loadTokens() {
  if (Date.now() - tokensLoadedAt < 30_000) return;
  tokensLoadedAt = Date.now();
  const { tokens } = await api('GET', `${stackPath}/tokens`);
  const select = $('#analytics-token');
  const chosen = select.value;
  const options = tokens.map((t) => el('option', { value: t.id }, `${t.label} (${t.prefix}…)${t.active ? '' : ' – inactive'}`));
  select.replaceChildren(el('option', { value: '' }, 'All tokens'), ...options);
  select.value = tokens.some((t) => t.id === chosen) ? chosen : '';
}

async function load() {
  await loadTokens();
  const win = $('#analytics-window').value;
  const token = $('#analytics-token').value;
  const query = new URLSearchParams({ window: win });
  if (token) query.set('token', token);
  const a = await api('GET', `${stackPath}/analytics?${query}`);
  let calls = 0;
  let errors = 0;
  const rows = a.methods.map((m) => {
    calls += m.calls;
    errors += m.errors;
    return el(
      'tr',
      { 'data-method': m.method },
      el('td', {}, el('code', {}, m.method)),
      el('td', { class: 'num' }, formatCount(m.calls)),
      el('td', { class: m.errors ? 'num bad' : 'num' }, formatCount(m.errors)),
      el('td', { class: 'num' }, formatMs(m.p50)),
      el('td', { class: 'num' }, formatMs(m.p99)),
    );
  });
  $('#analytics-rows').replaceChildren(...rows);
  $('#analytics-empty').hidden = rows.length > 0;
  $('#analytics-calls-total').textContent = formatCount(calls);
  $('#analytics-calls-total').dataset.value = String(calls);
  $('#analytics-errors-total').textContent = formatCount(errors);
  $('#analytics-errors-total').dataset.value = String(errors);
  setData(
    chart,
    a.series.map((p) => formats[a.window].format(new Date(p.t))),
    a.series.map((p) => p.calls),
    a.series.map((p) => p.errors),
  );
  const l = await api('GET', `${stackPath}/landing/nodes`);
  const nodes = l.nodes.map((n) =>
    el(
      'tr',
      { 'data-node': n.node },
      el('td', {}, el('code', {}, n.node)),
      el('td', { class: 'num' }, formatCount(n.sent)),
      el('td', { class: 'num', 'data-value': n.landedPct ?? '' }, formatPct(n.landedPct)),
      el('td', { class: 'num' }, formatSlots(n.slotsToLand.p50)),
      rankCell(l.ranking[n.node]),
    ),
  );
  $('#nodes-landing-rows').replaceChildren(...nodes);
  $('#nodes-landing-empty').hidden = nodes.length > 0;
}

/** Where a node ranks for sends (node-wide), its reason as the cell's title. */
function rankCell(r) {
  if (r === undefined) return el('td', { class: 'num' }, '–');
  return el('td', { class: 'num', title: r.reason, 'data-value': r.position ?? '' }, r.position === null ? 'exploring' : `#${r.position}`);
}

const refresh = poll(load);
$('#analytics-window').addEventListener('change', refresh);
$('#analytics-token').addEventListener('change', refresh);
