// Which engine serves (docs/runtimes.md): `rpc.server` picks uws, node, or auto (uws where a
// uWebSockets.js binary loads for this Node and libc, else node). The JUMPGATE_SERVER
// environment variable (uws or node) stands in for auto in every listener of the process, the
// simulated nodes' included: the whole test suite runs on either engine that way. Chosen once
// per thread.

import { NodeEngine } from './node-engine.js';
import type { ServerEngine } from './types.js';
import { loadUws, type UwsLoad } from './uws-binary.js';
import { UwsEngine } from './uws-engine.js';

export type ServerChoice = 'auto' | 'uws' | 'node';

/** `rpc.server: uws` where no uWebSockets.js binary loads. */
export class ServerChoiceError extends Error {
  override name = 'ServerChoiceError';
}

let loaded: UwsLoad | null = null;
const engines = new Map<ServerChoice, ServerEngine>();

/** Whether uWebSockets.js loads here, and the reason either way (loaded once). */
export function uwsLoad(): UwsLoad {
  return (loaded ??= loadUws());
}

/** Pure: the engine for `choice` given what loading uWS gave. */
export function engineFor(choice: ServerChoice, uws: UwsLoad): ServerEngine {
  if (choice === 'node') return new NodeEngine("Node's http and ws: rpc.server is node");
  if (uws.ok) return new UwsEngine(uws.native, uws.reason);
  if (choice === 'uws') throw new ServerChoiceError(`rpc.server is uws, but ${uws.reason}; set rpc.server to auto or node (docs/runtimes.md)`);
  return new NodeEngine(`Node's http and ws, as ${uws.reason}`);
}

/** `choice`, or JUMPGATE_SERVER's engine in place of auto. */
export function effectiveChoice(choice: ServerChoice, env: string | undefined): ServerChoice {
  if (choice !== 'auto' || env === undefined || env === '' || env === 'auto') return choice;
  if (env === 'uws' || env === 'node') return env;
  throw new ServerChoiceError(`JUMPGATE_SERVER must be uws, node or auto, not ${JSON.stringify(env)}`);
}

export function serverEngine(requested: ServerChoice): ServerEngine {
  const choice = effectiveChoice(requested, process.env.JUMPGATE_SERVER);
  let e = engines.get(choice);
  if (e === undefined) engines.set(choice, (e = engineFor(choice, uwsLoad())));
  return e;
}
