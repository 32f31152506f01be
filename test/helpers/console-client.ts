// A console API client for tests that need an account and a stack but do not test the console
// itself (console-api.test.ts has the full one): keeps the session cookie and the CSRF token.

const PASSWORD = 'correct horse battery';

export interface ConsoleAnswer {
  status: number;
  text: string;
  json: any;
}

export class ConsoleClient {
  private cookie: string | null = null;
  private csrf: string | null = null;

  constructor(readonly base: string) {}

  async send(method: string, path: string, body?: unknown): Promise<ConsoleAnswer> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie !== null) headers.cookie = this.cookie;
    if (this.csrf !== null && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const res = await fetch(new URL(path, this.base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'manual' });
    const set = res.headers.getSetCookie();
    if (set.length > 0) this.cookie = set[0]!.split(';')[0]!;
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      // a page
    }
    return { status: res.status, text, json };
  }

  get(path: string): Promise<ConsoleAnswer> {
    return this.send('GET', path);
  }

  /** Registers `email`, makes a stack and a token in it; their ids. */
  async stackWithToken(email: string, stackName: string, label: string): Promise<{ stack: string; tokenId: string; token: string }> {
    const r = await this.send('POST', '/api/v1/register', { email, password: PASSWORD });
    if (r.status !== 201) throw new Error(`register ${email}: ${r.status} ${r.text}`);
    this.csrf = r.json.csrfToken as string;
    const stack = await this.send('POST', '/api/v1/stacks', { name: stackName });
    if (stack.status !== 201) throw new Error(`stack ${stackName}: ${stack.status} ${stack.text}`);
    const token = await this.send('POST', `/api/v1/stacks/${stack.json.id}/tokens`, { label });
    if (token.status !== 201) throw new Error(`token ${label}: ${token.status} ${token.text}`);
    return { stack: stack.json.id as string, tokenId: token.json.record.id as string, token: token.json.token as string };
  }
}
