// Stack home: 24 h calls and data transfer, active tokens, and the 7-day traffic chart.

import { $, api, formatBytes, formatCount, poll, stackPath } from './common.js';
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
});
