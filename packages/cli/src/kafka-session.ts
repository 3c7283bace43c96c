import { DEMO_CONFIG_PATH, loadConfigFile, readEnv, requireBrokers, type SluiceConfig } from '@sluice/config';
import { createKafka, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import type { CliIo } from './io.ts';

/** What the Kafka-facing commands share: the config in use and a client on `KAFKA_BROKERS`. */
export interface KafkaSession {
  configPath: string;
  config: SluiceConfig;
  kafka: Kafka;
}

/** `--config`, else `SLUICE_CONFIG`, else the bundled demo config; brokers from `KAFKA_BROKERS` (required). */
export function openKafkaSession(io: CliIo, configOption: string | undefined): KafkaSession {
  const env = readEnv(io.env);
  const configPath = configOption ?? env.configPath ?? DEMO_CONFIG_PATH;
  const config = loadConfigFile(configPath, io.env);
  // kafkajs's own chatter goes to stderr, quiet unless LOG_LEVEL asks for more.
  const logger = createLogger({
    name: 'sluice-cli',
    level: io.env.LOG_LEVEL ? env.logLevel : 'error',
    destination: process.stderr,
  });
  const kafka = createKafka({
    brokers: requireBrokers(env),
    clientId: `${config.kafka.clientId}-cli`,
    logger,
    security: config.kafka,
  });
  return { configPath, config, kafka };
}
