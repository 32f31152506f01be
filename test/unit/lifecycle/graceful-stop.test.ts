// The signal sequence of `jumpgate start` on a stand-in gateway: what happens in which order,
// and with which exit code (the real process: test/integration/graceful-stop.test.ts).

import t from 'tap';
import { silentLogger } from '../../../src/log.js';
import { GracefulStop } from '../../../src/lifecycle/graceful-stop.js';
import { eventually } from '../../helpers/eventually.js';

function fakeGateway(readyDelayMs: number, opts: { drainFails?: boolean; drainHangs?: boolean } = {}) {
  const events: string[] = [];
  const exits: number[] = [];
  const gw = {
    config: { shutdown: { readyDelayMs } } as never,
    unready: () => void events.push('unready'),
    drain: () => {
      events.push('drain');
      if (opts.drainHangs === true) return new Promise<void>(() => {});
      return opts.drainFails === true ? Promise.reject(new Error('store gone')) : Promise.resolve();
    },
    close: () => {
      events.push('close');
      return Promise.resolve();
    },
  };
  const stop = new GracefulStop(gw, { log: silentLogger(), exit: (code) => void exits.push(code), after: async () => void events.push('after') });
  return { stop, events, exits };
}

t.test('SIGTERM: unready at once, drain only after the delay, exit 0', async (t) => {
  const { stop, events, exits } = fakeGateway(300);
  const at = performance.now();
  stop.signal('SIGTERM');
  t.same(events, ['unready'], 'unready synchronously, nothing stopped yet');
  t.ok(stop.stopping);
  await eventually('the exit', () => exits.length > 0);
  t.ok(performance.now() - at >= 290, 'the drain waited for the delay');
  t.same(events, ['unready', 'drain', 'after']);
  t.same(exits, [0]);
});

t.test('SIGINT: no delay', async (t) => {
  const { stop, events, exits } = fakeGateway(60_000);
  stop.signal('SIGINT');
  await eventually('the exit', () => exits.length > 0, 1000);
  t.same(events, ['unready', 'drain', 'after']);
  t.same(exits, [0]);
});

t.test('a second signal during the delay stops now with exit 1; a third exits at once', async (t) => {
  const { stop, events, exits } = fakeGateway(60_000);
  stop.signal('SIGTERM');
  stop.signal('SIGTERM');
  await eventually('the exit', () => exits.length > 0, 1000);
  t.same(events, ['unready', 'close', 'after'], 'no drain: closed at once');
  t.same(exits, [1]);
  stop.signal('SIGINT');
  t.same(exits, [1, 1], 'a third signal exits at once');
});

t.test('a second signal during a drain that hangs stops now', async (t) => {
  const { stop, events, exits } = fakeGateway(0, { drainHangs: true });
  stop.signal('SIGTERM');
  await eventually('the drain', () => events.includes('drain'), 1000);
  stop.signal('SIGINT');
  await eventually('the exit', () => exits.length > 0, 1000);
  t.same(events, ['unready', 'drain', 'close', 'after']);
  t.same(exits, [1]);
});

t.test('a drain that fails exits 1', async (t) => {
  const { stop, exits } = fakeGateway(0, { drainFails: true });
  stop.signal('SIGTERM');
  await eventually('the exit', () => exits.length > 0, 1000);
  t.same(exits, [1]);
});
