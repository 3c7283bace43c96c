import kafkajs, { type Kafka, type logCreator } from 'kafkajs';
import type { Logger } from '@sluice/logging';

const { Kafka: KafkaClass, logLevel } = kafkajs;

const LEVEL_NAMES: Record<number, 'error' | 'warn' | 'info' | 'debug'> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/** Routes kafkajs's own logging into pino. kafkajs INFO is chatty, so it is logged at debug. */
function pinoLogCreator(logger: Logger): logCreator {
  return () => ({ namespace, level, log }) => {
    const { message, ...extra } = log;
    const name = LEVEL_NAMES[level] ?? 'info';
    logger[name === 'info' ? 'debug' : name]({ kafkajs: namespace, ...extra }, message);
  };
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/** The one place a kafkajs client is built (brokers from `KAFKA_BROKERS`, via `@sluice/config`). */
export function createKafka(options: KafkaClientOptions): Kafka {
  return new KafkaClass({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.INFO,
    logCreator: pinoLogCreator(options.logger.child({ component: 'kafkajs' })),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 100, retries: 8, maxRetryTime: 5_000 },
  });
}
