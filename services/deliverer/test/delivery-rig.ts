import type { SluiceConfig } from '@sluice/config';
import type { RecordSink } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import type { Tracing } from '@sluice/tracing';
import type { Message } from 'kafkajs';
import { Registry } from 'prom-client';
import { UndiciWebhookClient } from '../src/transport/webhook-client.ts';
import { Delivery } from '../src/attempt/delivery.ts';
import { AddressPolicy } from '@sluice/webhook';
import { EndpointGates } from '../src/attempt/endpoint-gates.ts';
import { IsolationMetrics } from '../src/attempt/isolation-metrics.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';

/** Webhooks to 127.0.0.0/8 allowed: where the tests' receivers listen. */
export const LOOPBACK_POLICY = new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] });

export interface DeliveryRig {
  delivery: Delivery;
  /** What the delivery wrote to Kafka, in order. */
  sent: { topic: string; message: Message }[];
  /** Waits for the delivery's work in flight, then closes its client. */
  close(): Promise<void>;
}

/**
 * The real `Delivery` over a real undici client (`connections` per origin, loopback allowed); only
 * the Kafka side is a recording sink.
 */
export function deliveryRig(config: SluiceConfig, options: { connections: number; tracing?: Tracing }): DeliveryRig {
  const sent: DeliveryRig['sent'] = [];
  const sink: RecordSink = { send: async (topic, message) => void sent.push({ topic, message }) };
  const logger = createLogger({ name: 'test', level: 'silent' });
  const registry = new Registry();
  const gates = new EndpointGates(logger);
  const client = new UndiciWebhookClient({
    settings: () => ({ connections: options.connections }),
    policy: () => LOOPBACK_POLICY,
  });
  const delivery = new Delivery({
    config: () => config,
    client,
    sink,
    metrics: new DelivererMetrics(registry),
    logger,
    gates,
    isolation: new IsolationMetrics(registry, gates),
    ...(options.tracing && { tracing: options.tracing }),
  });
  return {
    delivery,
    sent,
    close: async () => {
      await delivery.drain();
      await client.close();
    },
  };
}
