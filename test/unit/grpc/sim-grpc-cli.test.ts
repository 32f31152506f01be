// `jumpgate sim-grpc` flags: values parsed, bad ones refused with the flag named.

import t from 'tap';
import { parseSimGrpcArgs } from '../../../src/cli/sim-grpc.js';
import { UsageError } from '../../../src/cli/usage-error.js';

t.test('flags become options and knobs', async (t) => {
  const c = parseSimGrpcArgs([
    '--port',
    '10000',
    '--slot-ms',
    '100',
    '--jitter-ms',
    '20',
    '--delay-ms',
    '5',
    '--drop-rate',
    '0.1',
    '--stall-rate',
    '0.01',
    '--stall-ms',
    '300',
    '--accounts',
    '32',
    '--delay-seed',
    '3',
  ]);
  t.match(c, {
    port: 10000,
    slotMs: 100,
    accountsPerSlot: 32,
    knobs: { jitterMs: 20, delayMs: 5, dropRate: 0.1, stallRate: 0.01, stallMs: 300 },
    delaySeed: 3,
  });
});

t.test('bad flags are usage errors naming the flag', async (t) => {
  t.throws(() => parseSimGrpcArgs([]), /--port is required/);
  t.throws(() => parseSimGrpcArgs(['--port', '1', '--drop-rate', '2']), /--drop-rate/);
  t.throws(() => parseSimGrpcArgs(['--port', '1', '--nope']), /nope/);
  try {
    parseSimGrpcArgs([]);
  } catch (e) {
    t.ok(e instanceof UsageError, 'a UsageError (exit code 2)');
  }
});
