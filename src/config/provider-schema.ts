// What a node's provider allows (docs/routing.md "Provider budgets", "Unsupported methods"):
// `nodes[].budget` and `nodes[].methods` of the config schema (schema.ts).

import { z } from 'zod';
import { expected, method, methodList, obj, positive } from './schema-kit.js';

export const BudgetSchema = obj({
  rate: positive('a number of credits per second').meta({ description: 'Credits per second the provider allows' }),
  burst: positive('a number of credits').optional().meta({ description: 'Credits spendable at once (default: one second of rate)' }),
  costs: z
    .record(method, positive('a number of credits'), expected('a mapping of method name to credits'))
    .optional()
    .meta({ description: 'Credits a call of the method costs (others: 1)' }),
  perDay: positive('a number of credits').optional().meta({ description: 'Credits per UTC day at most' }),
});

export const MethodListSchema = obj({
  only: methodList.optional().meta({ description: 'The node serves only these methods' }),
  except: methodList.optional().meta({ description: 'The node does not serve these methods' }),
});
