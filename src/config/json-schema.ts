// The JSON Schema for editors (config.schema.json): the zod schema of ./schema.ts, plus
// `default`s from ./defaults.ts (so defaulted keys are not `required`), plus "or a ${ENV}
// reference" on every scalar.

import { z } from 'zod';
import { DEFAULTS, ENTRY_DEFAULTS } from './defaults.js';
import { ConfigSchema } from './schema.js';

type Json = Record<string, unknown>;

const ENV_REF: Json = { $ref: '#/$defs/envRef' };
const ENV_REF_DEF: Json = {
  type: 'string',
  pattern: '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}',
  description: 'An environment reference: ${NAME} or ${NAME:-default}',
};

const isJson = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function addDefaults(node: Json, defaults: unknown): void {
  const props = node['properties'];
  if (!isJson(props) || !isJson(defaults)) return;
  const required = Array.isArray(node['required']) ? (node['required'] as string[]) : [];
  for (const [key, sub] of Object.entries(props)) {
    const d = defaults[key];
    if (d === undefined || !isJson(sub)) continue;
    sub['default'] = d;
    const i = required.indexOf(key);
    if (i !== -1) required.splice(i, 1);
    addDefaults(sub, d);
  }
  if (required.length === 0) delete node['required'];
}

/** Leaves (not object/array) become `anyOf: [leaf, ENV_REF]`; drops zod's safe-int bounds. */
function withEnvRefs(node: Json): Json {
  if (node['maximum'] === Number.MAX_SAFE_INTEGER) delete node['maximum'];
  if (node['minimum'] === Number.MIN_SAFE_INTEGER) delete node['minimum'];
  // A mapping or null (`tls`): the mapping's leaves take references, not the section itself.
  const members = node['anyOf'];
  if (Array.isArray(members) && members.some((m) => isJson(m) && m['type'] === 'object')) {
    node['anyOf'] = members.map((m: Json) => (m['type'] === 'object' ? withEnvRefs(m) : m));
    return node;
  }
  if (node['type'] === 'object' || node['type'] === 'array') {
    const props = node['properties'];
    if (isJson(props)) for (const k of Object.keys(props)) props[k] = withEnvRefs(props[k] as Json);
    if (isJson(node['items'])) node['items'] = withEnvRefs(node['items']);
    if (isJson(node['additionalProperties'])) node['additionalProperties'] = withEnvRefs(node['additionalProperties']);
    return node;
  }
  const { default: dflt, description, ...leaf } = node;
  const out: Json = { anyOf: [leaf, ENV_REF] };
  if (description !== undefined) out['description'] = description;
  if (dflt !== undefined) out['default'] = dflt;
  return out;
}

export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { target: 'draft-2020-12' }) as Json;
  addDefaults(schema, DEFAULTS);
  const props = schema['properties'] as Json;
  for (const list of ['nodes', 'tokens'] as const) {
    addDefaults((props[list] as Json)['items'] as Json, ENTRY_DEFAULTS[list]);
  }
  withEnvRefs(schema);
  const { $schema, ...rest } = schema;
  return {
    $schema,
    title: 'jumpgate config',
    description: 'jumpgate gateway config file (YAML). Every key is optional; unknown keys are rejected.',
    ...rest,
    $defs: { envRef: ENV_REF_DEF },
  };
}
