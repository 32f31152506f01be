// Shared by every console page: the API client (session cookie + X-CSRF-Token), error display,
// number formats, polling and the logout button. Plain ES modules, no build step.

export const $ = (sel) => document.querySelector(sel);
export const stackId = document.body.dataset.stackId ?? '';
export const stackPath = `/stacks/${encodeURIComponent(stackId)}`;

function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
}

export class ApiFailure extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Calls the JSON API; resolves to the parsed answer (null for 204), rejects with ApiFailure. */
export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken();
  let res;
  try {
    res = await fetch('/api/v1' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiFailure(0, 'network', 'The console did not answer; check your connection.');
  }
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const failure = new ApiFailure(
      res.status,
      data?.error?.code ?? `http_${res.status}`,
      data?.error?.message ?? res.statusText,
      res.headers.get('retry-after'),
    );
    if (res.status === 401 && failure.code === 'unauthorized') {
      location.assign(`/login?next=${encodeURIComponent(location.pathname)}`);
    }
    throw failure;
  }
  return data;
}

export function showError(err) {
  const box = $('#error');
  if (!box) return;
  box.textContent = err instanceof Error ? err.message : String(err);
  box.hidden = false;
}

export function clearError() {
  const box = $('#error');
  if (box) {
    box.hidden = true;
    box.textContent = '';
  }
}

/** Builds an element: el('td', {class: 'num'}, 'text', childNode). Text is never parsed as HTML. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) node.append(c instanceof Node ? c : String(c));
  return node;
}

export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

export function formatBytes(n) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = Number(n);
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)} ${units[i]}`;
}

export function formatMs(v) {
  if (v === null || v === undefined) return '–';
  return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toString();
}

/** A percentage with one decimal, or – when there is none yet (docs/landing.md "Figures"). */
export function formatPct(v) {
  return v === null || v === undefined ? '–' : `${v.toFixed(1)} %`;
}

/** A slot count, or – when nothing landed yet. */
export function formatSlots(v) {
  return v === null || v === undefined ? '–' : String(v);
}

export function formatDate(ms) {
  return ms ? new Date(ms).toLocaleString() : '–';
}

export function timeAgo(ms) {
  if (!ms) return 'never';
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}

/** Runs `load` now, every `ms` while the tab is visible, and on #refresh. No overlapping runs. */
export function poll(load, ms = 3000) {
  let running = false;
  let again = false;
  const run = async () => {
    if (running) {
      again = true; // a change arrived mid-load: load once more when this one ends
      return;
    }
    running = true;
    try {
      await load();
      clearError();
      const stamp = $('#updated');
      if (stamp) stamp.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      if (!(err instanceof ApiFailure && err.status === 401)) showError(err);
    } finally {
      running = false;
      if (again) {
        again = false;
        run();
      }
    }
  };
  $('#refresh')?.addEventListener('click', run);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) run();
  });
  setInterval(() => {
    if (!document.hidden) run();
  }, ms);
  run();
  return run;
}

/** Copies text (Clipboard API where the page is a secure context, else a selection fallback). */
export async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = el('textarea', { readonly: true, class: 'offscreen' });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy failed: select the text and copy it by hand');
}

/** Locks a form's submit button while `work` runs; shows its failure in #error. */
export function onSubmit(form, work) {
  form?.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const button = form.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    clearError();
    try {
      await work(new FormData(form));
    } catch (err) {
      showError(err);
    } finally {
      if (button) button.disabled = false;
    }
  });
}

$('#logout')?.addEventListener('click', async () => {
  try {
    await api('POST', '/logout');
  } catch {
    // logged out already, or the server is gone: either way, leave
  }
  location.assign('/login');
});
