// The health probes' own connections to one node (two at most, kept alive), so probes never
// queue behind traffic. The probes, the chain watch's polls (ten a second per node) and the
// landing status polls all go through here, on the control plane. A lean HTTP/1.1 client on
// the pipelined client's response parser (http1/parser.ts): node:http spent about a
// millisecond of the control plane's CPU per poll (its request and agent objects, and the
// garbage they leave), undici's parser is WebAssembly (~35 MB of compiler memory at start).

import net from 'node:net';
import tls from 'node:tls';
import { ProtocolError, ResponseParser, type AnswerSink } from './http1/parser.js';

export interface ProbeResponse {
  status: number;
  text: string;
}

/** Connections per node, at most. */
const MAX_CONNECTIONS = 2;
/** An idle connection closes after this long between probes (under a node's usual 5 s keep-alive). */
const IDLE_MS = 4_000;

interface Probe {
  readonly request: string;
  readonly timeoutMs: number;
  readonly resolve: (r: ProbeResponse) => void;
  readonly reject: (e: Error) => void;
  timer: NodeJS.Timeout | null;
}

/** The error a probe fails with when its time is up (the name and message AbortSignal.timeout gives). */
function timeoutError(): Error {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

const PROBE_ANSWER_MAX = 1024 * 1024;

class ProbeConnection implements AnswerSink {
  readonly socket: net.Socket;
  closed = false;
  /** The probe on it; one at a time (probes are not pipelined). */
  probe: Probe | null = null;
  private readonly parser = new ResponseParser();

  constructor(
    private readonly client: ProbeClient,
    host: string,
    port: number,
    secure: boolean,
  ) {
    this.socket = secure ? tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined }) : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.setTimeout(IDLE_MS, () => {
      if (this.probe === null) this.close(null);
    });
    this.socket.on('data', (d: Buffer) => {
      try {
        this.parser.feed(d, this);
      } catch (err) {
        this.close(err instanceof ProtocolError ? err : new ProtocolError(String(err)));
      }
    });
    this.socket.on('end', () => {
      if (this.probe !== null && this.parser.untilClose) this.parser.endOfStream(this);
    });
    this.socket.on('error', (err) => this.close(err));
    this.socket.on('close', () => this.close(new Error('socket closed')));
  }

  get unanswered(): number {
    return this.probe === null ? 0 : 1;
  }

  send(p: Probe): void {
    this.probe = p;
    p.timer = setTimeout(onProbeTimeout, p.timeoutMs, this);
    this.socket.write(p.request);
  }

  /** Probes ask for a slot or a health word: an answer past this is not one (the fee watcher's blocks: ProbeClient's answerMax). */
  get bufferLimit(): number {
    return this.client.answerMax;
  }

  streamFrom(): boolean {
    this.close(new ProtocolError(`probe answer over ${this.client.answerMax} bytes`));
    return false;
  }

  streamData(): void {}

  answer(status: number, close: boolean, body: Buffer | null): void {
    if (body === null) return;
    const p = this.probe!;
    this.probe = null;
    clearTimeout(p.timer!);
    if (close) this.close(null);
    p.resolve({ status, text: body.toString('utf8') });
    if (!this.closed) this.client.free(this);
  }

  /** Ends the connection; its probe, if any, fails with `err`. */
  close(err: Error | null): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    const p = this.probe;
    this.probe = null;
    if (p !== null) {
      clearTimeout(p.timer!);
      p.reject(err ?? new Error('connection closed'));
    }
    this.client.closed(this);
  }
}

function onProbeTimeout(c: ProbeConnection): void {
  // The answer may still come: the connection cannot carry another probe before it.
  c.close(timeoutError());
}

export class ProbeClient {
  private readonly host: string;
  private readonly port: number;
  private readonly secure: boolean;
  /** `POST ` … up to the path, and the headers after it up to `content-length: `. */
  private readonly headers: string;
  private readonly connections: ProbeConnection[] = [];
  private readonly idle: ProbeConnection[] = [];
  private readonly waiting: Probe[] = [];
  private readonly pending = new Set<Promise<ProbeResponse>>();
  private shut = false;

  /** `url`: the node's URL (credentials in it are sent as basic auth, as with traffic); answers over `answerMax` bytes fail. */
  constructor(
    url: string,
    readonly answerMax = PROBE_ANSWER_MAX,
  ) {
    const u = new URL(url);
    this.secure = u.protocol === 'https:';
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port) || (this.secure ? 443 : 80);
    // The user agent lets a simulated node tell probes from traffic (sim knob slowRate spares probes).
    let h = ` HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\nuser-agent: jumpgate-health\r\n`;
    if (u.username !== '' || u.password !== '') {
      const creds = decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password);
      h += `authorization: Basic ${Buffer.from(creds).toString('base64')}\r\n`;
    }
    this.headers = h + 'content-length: ';
  }

  /** POSTs a JSON body to `path`; rejects on a connection error or after `timeoutMs`. */
  post(path: string, body: string, timeoutMs: number): Promise<ProbeResponse> {
    if (this.shut) return Promise.reject(new Error('probe client closed'));
    const p = new Promise<ProbeResponse>((resolve, reject) => {
      const request = 'POST ' + path + this.headers + Buffer.byteLength(body) + '\r\n\r\n' + body;
      this.dispatch({ request, timeoutMs, resolve, reject, timer: null });
    });
    this.pending.add(p);
    const forget = (): void => void this.pending.delete(p);
    p.then(forget, forget);
    return p;
  }

  private dispatch(p: Probe): void {
    const c = this.idle.pop();
    if (c !== undefined) c.send(p);
    else if (this.connections.length < MAX_CONNECTIONS) {
      const fresh = new ProbeConnection(this, this.host, this.port, this.secure);
      this.connections.push(fresh);
      fresh.send(p);
    } else this.waiting.push(p);
  }

  /** `c` answered: it takes the next waiting probe or waits for one. */
  free(c: ProbeConnection): void {
    const next = this.waiting.shift();
    if (next !== undefined) c.send(next);
    else this.idle.push(c);
  }

  /** `c` closed: forgotten, and a waiting probe gets a new connection. */
  closed(c: ProbeConnection): void {
    remove(this.connections, c);
    remove(this.idle, c);
    const next = this.waiting.shift();
    if (next === undefined) return;
    if (this.shut) next.reject(new Error('probe client closed'));
    else this.dispatch(next);
  }

  /** Lets the probes in flight finish, then closes the connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    await this.destroy();
  }

  /** Closes the connections now: probes in flight fail. */
  async destroy(): Promise<void> {
    this.shut = true;
    for (const p of this.waiting.splice(0)) p.reject(new Error('probe client closed'));
    for (const c of [...this.connections]) c.close(new Error('probe client closed'));
  }
}

function remove(list: ProbeConnection[], c: ProbeConnection): void {
  const i = list.indexOf(c);
  if (i >= 0) list.splice(i, 1);
}
