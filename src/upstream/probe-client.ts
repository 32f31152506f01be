// The health probes' own connections to one node (two at most, kept alive), so probes never
// queue behind traffic. Built on node:http rather than undici: undici's HTTP parser is
// WebAssembly, and compiling it costs a gateway start ~35 MB of compiler memory (peak RSS,
// part of it kept by the allocator) plus ~7 MB for the module, for two requests a second.
// undici is loaded only where it carries traffic (`upstream.client: undici`, node WebSockets).

import http from 'node:http';
import https from 'node:https';

export interface ProbeResponse {
  status: number;
  text: string;
}

export class ProbeClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly base: URL;
  private readonly pending = new Set<Promise<ProbeResponse>>();

  constructor(url: string) {
    this.base = new URL(url);
    const tls = this.base.protocol === 'https:';
    // `timeout` closes a connection idle this long between probes (as undici's keepAliveTimeout did).
    const opts = { keepAlive: true, maxSockets: 2, maxFreeSockets: 2, timeout: 4_000 };
    this.agent = tls ? new https.Agent(opts) : new http.Agent(opts);
    this.request = tls ? https.request : http.request;
  }

  /** POSTs a JSON body to `path`; rejects on a connection error or after `timeoutMs`. */
  post(path: string, body: string, timeoutMs: number): Promise<ProbeResponse> {
    const p = this.send(path, body, timeoutMs);
    this.pending.add(p);
    const forget = (): void => void this.pending.delete(p);
    p.then(forget, forget);
    return p;
  }

  private send(path: string, body: string, timeoutMs: number): Promise<ProbeResponse> {
    return new Promise((resolve, reject) => {
      const signal = AbortSignal.timeout(timeoutMs);
      // The user agent lets a simulated node tell probes from traffic (sim knob slowRate spares probes).
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'jumpgate-health' };
      // The URL gives host and port (an IPv6 literal loses its brackets), `path` the rest.
      const req = this.request(this.base, { path, method: 'POST', agent: this.agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      });
      // Rejects with the timeout's own error (the message undici gave), not a generic abort.
      const onAbort = (): void => {
        reject(signal.reason as Error);
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal.removeEventListener('abort', onAbort));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Lets the probes in flight finish, then closes the connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    this.agent.destroy();
  }

  async destroy(): Promise<void> {
    this.agent.destroy();
  }
}
