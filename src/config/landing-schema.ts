// routing.landing: transaction tracking, rebroadcast and landing-aware send routing
// (docs/landing.md).

import { z } from 'zod';
import { expected, int, obj } from './schema-kit.js';

export const LandingSchema = obj(
  {
    commitment: z.enum(['processed', 'confirmed', 'finalized'], expected('one of processed, confirmed, finalized')).meta({
      description: 'A tracked transaction counts as landed once its status reaches this commitment',
    }),
    maxTracked: int(0, 1_000_000).meta({
      description: 'Transactions tracked at once per data plane (0: no tracking); beyond it the oldest are dropped and counted as untracked',
    }),
    rebroadcastMs: int(0, 60_000).meta({
      description: 'Resend a tracked transaction (same bytes, skipPreflight, maxRetries 0) every this many ms until it lands or expires (0: never)',
    }),
    ranking: obj(
      {
        enabled: z.boolean(expected('true or false')).meta({
          description: 'sendTransaction without configured affinity goes to the node whose recent sends landed best (false: routed as any call)',
        }),
        halfLifeMs: int(1000, 3_600_000).meta({ description: "How fast a node's past outcomes fade from its score" }),
        overdueSlots: int(1, 150).meta({ description: 'A send not seen in a block within this many slots counts as not landed for the ranking' }),
        fallbackSlots: int(1, 150).meta({
          description: 'An explored send not in a block within this many slots is sent to the best node too, and counts as late for the explored node',
        }),
        minSamples: int(1, 10_000).meta({ description: 'Recent outcomes a node needs to be ranked; below, it is explored' }),
        exploreShare: z
          .number(expected('a number from 0 to 0.5'))
          .min(0, expected('a number from 0 to 0.5'))
          .max(0.5, expected('a number from 0 to 0.5'))
          .meta({ description: 'Share of sends that go to a node other than the best, so every node keeps recent figures' }),
        slotWeight: z
          .number(expected('a number from 0 to 1'))
          .min(0, expected('a number from 0 to 1'))
          .max(1, expected('a number from 0 to 1'))
          .meta({ description: 'Score lost per mean slot to land (the score is the share landed in time, 0 to 1)' }),
      },
      'Landing-aware send routing (docs/landing.md "Sends go where they land")',
    ),
  },
  'Solana: every accepted sendTransaction is tracked until it lands or its blockhash expires, per node (docs/landing.md)',
);
