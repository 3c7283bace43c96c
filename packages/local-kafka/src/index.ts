export {
  startLocalKafka,
  type BrokerExit,
  type LocalKafka,
  type LocalKafkaSecurity,
  type SecuredBrokerOptions,
  type StartLocalKafkaOptions,
} from './broker.ts';
export {
  ensureKafkaInstalled,
  findKafkaInstallation,
  isKafka4,
  KAFKA_VERSION,
  kafkaVersionFromEnv,
  SCALA_VERSION,
  SUPPORTED_KAFKA_VERSIONS,
  type InstallOptions,
  type KafkaInstallation,
  type KafkaVersion,
} from './install.ts';
export { generateTlsMaterial, type TlsMaterial } from './tls-material.ts';
