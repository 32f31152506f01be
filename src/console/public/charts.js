// Chart.js (served from /assets/chart.umd.js as a classic script: window.Chart) with the
// console's look. Charts are created once and updated in place on every poll.

const BLUE = '#2563eb';
const RED = '#dc2626';

function baseOptions() {
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    interaction: { mode: 'index', intersect: false },
    plugins: { legend: { display: false } },
    scales: {
      y: { beginAtZero: true, ticks: { precision: 0 } },
      x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkipPadding: 16 } },
    },
  };
}

/** Bars: one dataset of calls. */
export function barChart(canvas) {
  return new window.Chart(canvas, {
    type: 'bar',
    data: { labels: [], datasets: [{ label: 'Calls', data: [], backgroundColor: BLUE, borderRadius: 3 }] },
    options: baseOptions(),
  });
}

/** Lines: calls and errors. */
export function lineChart(canvas) {
  const options = baseOptions();
  options.plugins.legend = { display: true, position: 'bottom' };
  return new window.Chart(canvas, {
    type: 'line',
    data: {
      labels: [],
      datasets: [
        {
          label: 'Calls',
          data: [],
          borderColor: BLUE,
          backgroundColor: 'rgba(37, 99, 235, 0.12)',
          fill: true,
          cubicInterpolationMode: 'monotone',
          pointRadius: 0,
        },
        { label: 'Errors', data: [], borderColor: RED, backgroundColor: RED, cubicInterpolationMode: 'monotone', pointRadius: 0 },
      ],
    },
    options,
  });
}

/** Replaces labels and dataset values, redrawing without animation. */
export function setData(chart, labels, ...series) {
  chart.data.labels = labels;
  series.forEach((values, i) => {
    chart.data.datasets[i].data = values;
  });
  chart.update('none');
}
