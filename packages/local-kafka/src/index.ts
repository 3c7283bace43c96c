export { startLocalKafka } from './broker.ts';
export type {
  BrokerExit,
  LocalKafka,
  LocalKafkaSecurity,
  SecuredBrokerOptions,
  StartLocalKafkaOptions,
} from './broker.ts';
export {
  ensureKafkaInstalled,
  findKafkaInstallation,
  isKafka4,
  KAFKA_VERSION,
  kafkaVersionFromEnv,
  SCALA_VERSION,
  SUPPORTED_KAFKA_VERSIONS,
} from './install.ts';
export type { InstallOptions, KafkaInstallation, KafkaVersion } from './install.ts';
export { generateTlsMaterial } from './tls-material.ts';
export type { TlsMaterial } from './tls-material.ts';
