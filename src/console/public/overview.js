// Stack home: 24 h calls and data transfer, active tokens, the 7-day traffic chart, and the
// Transactions panel (landing per token over 24 h, docs/landing.md "Where they show").

import { $, api, el, formatBytes, formatCount, formatPct, formatSlots, poll, stackPath } from './common.js';
import { barChart, setData } from './charts.js';

const chart = barChart($('#traffic-chart'));
const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', month: 'short', day: 'numeric', timeZone: 'UTC' });

poll(async () => {
  const o = await api('GET', `${stackPath}/overview`);
  $('#overview-calls').textContent = formatCount(o.calls24h);
  $('#overview-calls').dataset.value = String(o.calls24h);
  $('#overview-bytes').textContent = formatBytes(o.bytes24h);
  $('#overview-bytes').dataset.value = String(o.bytes24h);
  $('#overview-tokens').textContent = formatCount(o.activeTokens);
  $('#overview-tokens').dataset.value = String(o.activeTokens);
  setData(
    chart,
    o.daily.map((d) => day.format(new Date(d.day))),
    o.daily.map((d) => d.calls),
  );
  const l = await api('GET', `${stackPath}/landing`);
  const rows = l.tokens.map((t) =>
    el(
      'tr',
      { 'data-token': t.tokenId },
      el('td', {}, `${t.label} (${t.prefix}…)`),
      el('td', { class: 'num', 'data-value': t.sent }, formatCount(t.sent)),
      el('td', { class: 'num', 'data-value': t.landedPct ?? '' }, formatPct(t.landedPct)),
      el('td', { class: 'num' }, formatSlots(t.slotsToLand.p50)),
      el('td', { class: 'num' }, formatSlots(t.slotsToLand.p90)),
    ),
  );
  $('#landing-rows').replaceChildren(...rows);
  $('#landing-empty').hidden = rows.length > 0;
});
