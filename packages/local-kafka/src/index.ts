export { startLocalKafka } from './broker.ts';
export { freePorts } from './free-ports.ts';
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
  processExists,
  SCALA_VERSION,
  sluiceCacheDir,
  SUPPORTED_KAFKA_VERSIONS,
} from './install.ts';
export type { InstallOptions, KafkaInstallation, KafkaVersion } from './install.ts';
export { generateTlsMaterial } from './tls-material.ts';
export type { TlsMaterial } from './tls-material.ts';
