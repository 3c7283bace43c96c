import kafkajs, { type Kafka, type logCreator } from 'kafkajs';
import type { KafkaSecurity } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { kafkaJsSecurity } from './kafka-security.ts';
import { fixRequestQueueTimer } from './request-queue-timer.ts';
import { rememberAdminClusters } from './topic-offsets.ts';
import { fixTopicMetadataLookups } from './topic-metadata-index.ts';

const { Kafka: KafkaClass, logLevel } = kafkajs;

/**
 * kafkajs logs every retriable broker answer (e.g. "not the leader" right after a topic is created)
 * at ERROR while it retries by itself; what really fails reaches Sluice's code as an error or a
 * consumer crash and is logged there. So kafkajs's own lines go one level down.
 */
const LEVEL_NAMES: Record<number, 'warn' | 'info' | 'debug' | 'trace'> = {
  [logLevel.ERROR]: 'warn',
  [logLevel.WARN]: 'info',
  [logLevel.INFO]: 'debug',
  [logLevel.DEBUG]: 'trace',
};

/** Routes kafkajs's own logging into pino, one level down (see LEVEL_NAMES). */
function pinoLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, ...extra } = log;
      logger[LEVEL_NAMES[level] ?? 'debug']({ kafkajs: namespace, ...extra }, message);
    };
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** TLS and SASL (`kafka.ssl`, `kafka.sasl` of the config file); absent: plaintext, no auth. */
  security?: KafkaSecurity;
  /** Retries of connects and requests; default 8 (a one-shot check passes 0 and owns its backoff). */
  retries?: number;
}

/**
 * The one place a kafkajs client is built: brokers from `KAFKA_BROKERS`, TLS and SASL from the
 * config file's `kafka` section (both via `@sluice/config`). It also stops kafkajs's idle
 * connections from waking the process every millisecond (`fixRequestQueueTimer`), and makes its
 * lookups of a topic in the cluster metadata cost one map lookup rather than a scan of every topic
 * (`fixTopicMetadataLookups`). Its admins ask the offsets of many topics in one request per broker
 * (`topicOffsets`).
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  fixRequestQueueTimer();
  fixTopicMetadataLookups();
  const kafka = new KafkaClass({
    clientId: options.clientId,
    brokers: options.brokers,
    ...kafkaJsSecurity(options.security),
    logLevel: logLevel.INFO,
    logCreator: pinoLogCreator(options.logger.child({ component: 'kafkajs' })),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 100, retries: options.retries ?? 8, maxRetryTime: 5_000 },
  });
  rememberAdminClusters(kafka);
  return kafka;
}
