// Log in, register, and name the first stack.

import { $, api, onSubmit, ApiFailure } from './common.js';

/** Only same-site paths are followed after login. */
function nextPath() {
  const next = new URLSearchParams(location.search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/stacks';
}

function throttled(err) {
  if (err instanceof ApiFailure && err.status === 429 && err.retryAfter) {
    return new Error(`Too many failed logins. Try again in ${err.retryAfter} s.`);
  }
  return err;
}

onSubmit($('#login-form'), async (f) => {
  try {
    await api('POST', '/login', { email: String(f.get('email')).trim(), password: String(f.get('password')) });
  } catch (err) {
    throw throttled(err);
  }
  location.assign(nextPath());
});

onSubmit($('#register-form'), async (f) => {
  await api('POST', '/register', { email: String(f.get('email')).trim(), password: String(f.get('password')) });
  location.assign('/onboarding');
});

onSubmit($('#onboarding-form'), async (f) => {
  const description = String(f.get('description') ?? '').trim();
  const stack = await api('POST', '/stacks', { name: String(f.get('name')).trim(), description: description || null });
  location.assign(`/stacks/${encodeURIComponent(stack.id)}`);
});
