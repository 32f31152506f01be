// Prometheus series of the gRPC listener (docs/grpc.md "Metrics"), registered on the gateway's
// registry. Label values are configured source ids only. Hot-path counters are label children
// looked up once per source, not per update.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

type CounterChild = ReturnType<Counter<'source'>['labels']>;
type HistogramChild = ReturnType<Histogram<'source'>['labels']>;

export class SourceSeries {
  constructor(
    readonly first: CounterChild,
    readonly duplicate: CounterChild,
    readonly lag: HistogramChild,
    readonly reconnects: CounterChild,
  ) {}
}

export class GrpcMetrics {
  private readonly first: Counter<'source'>;
  private readonly duplicate: Counter<'source'>;
  private readonly lag: Histogram<'source'>;
  private readonly reconnects: Counter<'source'>;
  readonly dropped: Counter<'reason'>;
  readonly closed: Counter<'code'>;
  readonly streams: Gauge;
  readonly upstreamStreams: Gauge<'source'>;
  /** Read at scrape time: open upstream streams per source id. */
  upstream: () => Map<string, number> = () => new Map();

  constructor(registry: Registry | null) {
    const registers = registry === null ? [] : [registry];
    this.first = new Counter({
      name: 'jumpgate_grpc_source_first_total',
      help: 'gRPC updates this source delivered first (the ones clients received)',
      labelNames: ['source'],
      registers,
    });
    this.duplicate = new Counter({
      name: 'jumpgate_grpc_source_duplicates_total',
      help: 'gRPC updates this source delivered after another source had',
      labelNames: ['source'],
      registers,
    });
    this.lag = new Histogram({
      name: 'jumpgate_grpc_source_lag_seconds',
      help: 'How long after the first source this source delivered the same update',
      labelNames: ['source'],
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
      registers,
    });
    this.reconnects = new Counter({
      name: 'jumpgate_grpc_source_reconnects_total',
      help: 'Times a source stream was reopened (failed or stalled)',
      labelNames: ['source'],
      registers,
    });
    this.dropped = new Counter({
      name: 'jumpgate_grpc_updates_dropped_total',
      help: 'Upstream updates not delivered: late (older than the dedup window), superseded (older than an account update already delivered)',
      labelNames: ['reason'],
      registers,
    });
    this.closed = new Counter({
      name: 'jumpgate_grpc_streams_closed_total',
      help: 'Client streams the gateway ended, by gRPC status',
      labelNames: ['code'],
      registers,
    });
    this.streams = new Gauge({ name: 'jumpgate_grpc_streams', help: 'Open client Subscribe streams', registers });
    const upstream = (): Map<string, number> => this.upstream();
    this.upstreamStreams = new Gauge({
      name: 'jumpgate_grpc_upstream_streams',
      help: 'Open upstream Subscribe streams per source',
      labelNames: ['source'],
      registers,
      collect() {
        this.reset();
        for (const [id, n] of upstream()) this.labels(id).set(n);
      },
    });
  }

  source(id: string): SourceSeries {
    return new SourceSeries(this.first.labels(id), this.duplicate.labels(id), this.lag.labels(id), this.reconnects.labels(id));
  }
}
