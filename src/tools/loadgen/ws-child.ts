// Child process of `jumpgate bench --ws-subscribers N --ws-procs P`: holds its share of the
// subscribers and reports to the parent over IPC (see ws-load.ts for the conversation).

import { SubscriberGroup, type GroupSpec } from './ws-subscribers.js';

export type ToChild =
  { type: 'connect'; spec: GroupSpec; count: number; first: number } | { type: 'record'; from: number } | { type: 'stop' } | { type: 'close' };

export type FromChild =
  | { type: 'progress'; connected: number; failed: number; subscribed: number; arrivals: number }
  | { type: 'ready'; counts: SubscriberGroup['counts'] }
  | { type: 'arrivals'; keys: string[]; times: number[][]; counts: SubscriberGroup['counts'] }
  | { type: 'closed' };

let group: SubscriberGroup | null = null;
let progress: NodeJS.Timeout | null = null;

function send(m: FromChild): void {
  process.send!(m);
}

process.on('message', (m: ToChild) => {
  switch (m.type) {
    case 'connect': {
      const g = new SubscriberGroup(m.spec);
      group = g;
      progress = setInterval(
        () => send({ type: 'progress', connected: g.counts.connected, failed: g.counts.failed, subscribed: g.counts.subscribed, arrivals: g.arrivals }),
        250,
      );
      void g.connect(m.count, m.first).then(() => send({ type: 'ready', counts: g.counts }));
      return;
    }
    case 'record':
      group?.startRecording(m.from);
      return;
    case 'stop':
      // After this turn's socket reads: frames that arrived before "stop" are counted even
      // when this process was too busy to read them in time.
      setImmediate(() => {
        const a = group!.stopRecording();
        send({ type: 'arrivals', ...a, counts: group!.counts });
      });
      return;
    case 'close':
      if (progress !== null) clearInterval(progress);
      void (group?.close() ?? Promise.resolve()).then(() => {
        send({ type: 'closed' });
        process.disconnect();
      });
      return;
  }
});
// The parent going away ends this process too.
process.on('disconnect', () => process.exit(0));
