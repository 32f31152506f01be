// The batch plan analyze() makes of a body, for tests that need one (throws when the body is not a batch).
import { analyze, A_BATCH, type BatchPlan } from '../../src/rpc/analyze.js';

export function planOf(body: Buffer, maxBatch = 1000): BatchPlan {
  const a = analyze(body, maxBatch);
  if (a.type !== A_BATCH || a.plan === null) throw new Error('expected a batch plan for ' + body.toString());
  return a.plan;
}
