export { startLocalKafka } from './broker.ts';
export type { BrokerExit, LocalKafka, StartLocalKafkaOptions } from './broker.ts';
export {
  ensureKafkaInstalled,
  findKafkaInstallation,
  KAFKA_VERSION,
  processExists,
  SCALA_VERSION,
  sluiceCacheDir,
} from './install.ts';
export type { InstallOptions, KafkaInstallation } from './install.ts';
