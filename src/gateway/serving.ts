// What a listener hands every request: the settings of the current configuration generation
// (swapped by reference on reload), the long-lived services, and the request path's mutable
// state. One per data plane; a request reads `settings` once, when it starts.

import type { Config } from '../config/schema.js';
import type { LimitBuffers, MissingLimitBuffers } from '../limits/limit-buffers.js';
import { RequestState } from './request-state.js';
import { Services, type ServiceParts } from './services.js';
import { Settings } from './settings.js';

export class Serving {
  settings: Settings;
  readonly services: Services;
  readonly state: RequestState;

  constructor(config: Config, parts: ServiceParts) {
    this.settings = new Settings(config);
    this.services = new Services(config, parts);
    this.state = new RequestState();
  }

  /** A reload: new requests get the new settings; services keep their state. */
  reconfigure(next: Config, buffers: LimitBuffers | null = null): MissingLimitBuffers | null {
    this.settings = new Settings(next);
    return this.services.reconfigure(next, buffers);
  }
}
