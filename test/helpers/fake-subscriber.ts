// A client of the subscription hub (src/upstream/ws/hub.ts) that records what it is sent:
// answers to its subscribe and unsubscribe calls, and the notifications.

import type { ClientSub, Subscriber } from '../../src/upstream/ws/hub.js';

export class FakeSubscriber implements Subscriber {
  readonly subs = new Map<string, ClientSub>();
  readonly keys = new Set<string>();
  closed = false;
  readonly sent: string[] = [];
  readonly notes: string[] = [];

  /** Each answer's call and outcome, as usage books it: "method ok" or "method failed". */
  readonly outcomes: string[] = [];

  answer(method: string, failed: boolean, text: string): void {
    this.sent.push(text);
    this.outcomes.push(`${method} ${failed ? 'failed' : 'ok'}`);
  }

  notify(frame: Buffer): void {
    this.notes.push(frame.toString());
  }

  /** Client id of the subscription the last confirmation was for. */
  lastId(): string {
    return String((JSON.parse(this.sent.at(-1)!) as { result: unknown }).result);
  }
}
