// Token changes across instances (docs/routing.md "Shared limits across instances (Redis)"): an instance
// whose console changed tokens or stacks publishes on `<keyPrefix>tokens`; every other instance
// hears it and syncs its token table from the store at once, instead of at its next poll (the
// poll stays, for changes made while Redis was down or by a process without Redis).

import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { RedisLink } from './redis-link.js';

export class TokenEvents {
  private readonly sub: Redis;
  private readonly channel: string;

  constructor(
    private readonly link: RedisLink,
    keyPrefix: string,
    onRemoteChange: () => void,
    private readonly log: Logger,
  ) {
    this.channel = keyPrefix + 'tokens';
    this.sub = link.subscriber();
    this.sub.on('message', (channel: string, from: string) => {
      if (channel === this.channel && from !== link.instanceId) onRemoteChange();
    });
    // Messages published while Redis was unreachable are lost: catch up once it is back.
    link.onBackUp(onRemoteChange);
    this.sub.subscribe(this.channel).catch((err: unknown) => log.debug({ err }, 'token channel subscription failed; ioredis retries on reconnect'));
  }

  /** Tells the other instances that tokens changed in the store; never waits, never throws. */
  publish(): void {
    this.link.client.publish(this.channel, this.link.instanceId).catch((err: unknown) => {
      this.log.debug({ err }, 'token change not published (redis unreachable): other instances see it at their next poll');
    });
  }

  close(): void {
    this.sub.disconnect();
  }
}
