import { Gauge, type Registry } from 'prom-client';

/** Consumer lag per partition (docs/reference/observability.md), shared by every consumer of a process. */
export class ConsumerMetrics {
  readonly lag: Gauge<'topic' | 'partition' | 'group'>;

  constructor(registry: Registry) {
    const existing = registry.getSingleMetric('sluice_consumer_lag') as
      | Gauge<'topic' | 'partition' | 'group'>
      | undefined;
    this.lag =
      existing ??
      new Gauge({
        name: 'sluice_consumer_lag',
        help: 'Records between the last record handed to the service and the partition high watermark',
        labelNames: ['topic', 'partition', 'group'],
        registers: [registry],
      });
  }

  record(group: string, topic: string, partition: number, highWatermark: string, lastOffset: string): void {
    const lag = Math.max(0, Number(highWatermark) - Number(lastOffset) - 1);
    this.lag.set({ group, topic, partition: String(partition) }, lag);
  }
}
