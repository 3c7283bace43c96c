import { loadConfigFile, readEnv, requireBrokers, type SluiceConfig } from '@sluice/config';
import { createKafka, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { CliError, type CliIo } from './io.ts';

/** What the Kafka-facing commands share: the config in use and a client on `KAFKA_BROKERS`. */
export interface KafkaSession {
  configPath: string;
  config: SluiceConfig;
  kafka: Kafka;
}

/** `--config`, else `SLUICE_CONFIG`; there is no default (the CLI never guesses which pipeline it talks to). */
export function resolveConfigPath(io: CliIo, configOption: string | undefined): string {
  const path = configOption ?? readEnv(io.env).configPath;
  if (path === undefined || path === '') {
    throw new CliError(
      'no config file: pass --config <file> or set SLUICE_CONFIG (the topics and destinations come from it)',
    );
  }
  return path;
}

/** The config (see `resolveConfigPath`) and a Kafka client on `KAFKA_BROKERS` (required). */
export function openKafkaSession(io: CliIo, configOption: string | undefined): KafkaSession {
  const configPath = resolveConfigPath(io, configOption);
  const env = readEnv(io.env);
  const config = loadConfigFile(configPath, io.env);
  // kafkajs's own chatter goes to stderr, quiet unless LOG_LEVEL asks for more.
  const logger = createLogger({
    name: 'sluice-cli',
    level: io.env.LOG_LEVEL ? env.logLevel : 'error',
    destination: process.stderr,
  });
  const kafka = createKafka({ brokers: requireBrokers(env), clientId: `${config.kafka.clientId}-cli`, logger });
  return { configPath, config, kafka };
}
