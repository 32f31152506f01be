// A WebSocket test client (undici's) that records frames and waits for the ones a test needs.

import { WebSocket } from 'undici';
import { eventuallyValue } from './eventually.js';

export interface TestWs {
  ws: WebSocket;
  frames: any[];
  closed: { code: number; reason: string } | null;
  send(obj: unknown): void;
  /** Resolves with the first recorded frame (from index `from`) matching `pred`. */
  next(pred: (f: any) => boolean, timeoutMs?: number, from?: number): Promise<any>;
  /** Resolves once `n` frames match `pred`. */
  collect(pred: (f: any) => boolean, n: number, timeoutMs?: number): Promise<any[]>;
  waitClosed(timeoutMs?: number): Promise<{ code: number; reason: string }>;
  close(): void;
}

export function openWs(url: string): Promise<TestWs> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const waiters = new Set<() => void>();
    const wake = (): void => {
      for (const w of [...waiters]) w();
    };
    const t: TestWs = {
      ws,
      frames: [],
      closed: null,
      send: (obj) => ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj)),
      next(pred, timeoutMs = 5000, from = 0) {
        return new Promise((res, rej) => {
          const check = (): void => {
            const f = t.frames.slice(from).find(pred);
            if (f !== undefined) {
              waiters.delete(check);
              clearTimeout(timer);
              res(f);
            } else if (t.closed) {
              waiters.delete(check);
              clearTimeout(timer);
              rej(new Error(`socket closed (${t.closed.code} ${t.closed.reason}) while waiting`));
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            rej(new Error(`timed out; frames: ${JSON.stringify(t.frames.slice(-5))}`));
          }, timeoutMs);
          waiters.add(check);
          check();
        });
      },
      collect(pred, n, timeoutMs = 5000) {
        return eventuallyValue(
          () => `${n} frames (got ${t.frames.filter(pred).length})`,
          () => {
            const got = t.frames.filter(pred);
            return got.length >= n ? got.slice(0, n) : undefined;
          },
          timeoutMs,
        );
      },
      waitClosed(timeoutMs = 5000) {
        return eventuallyValue('the socket to close', () => t.closed ?? undefined, timeoutMs);
      },
      close: () => ws.close(),
    };
    ws.addEventListener('message', (ev) => {
      const data = ev.data as string;
      try {
        t.frames.push(JSON.parse(data));
      } catch {
        t.frames.push({ raw: data });
      }
      wake();
    });
    ws.addEventListener('close', (ev) => {
      t.closed = { code: ev.code, reason: ev.reason };
      wake();
    });
    ws.addEventListener('open', () => resolve(t));
    ws.addEventListener('error', () => {
      if (ws.readyState !== WebSocket.OPEN) reject(new Error('websocket upgrade failed'));
    });
  });
}
