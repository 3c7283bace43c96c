export {
  AUTO_DISABLE_AFTER_DEFAULT,
  BATCH_BOUNDS,
  BATCH_DEFAULTS,
  DEFAULT_BACKOFF,
  DEFAULT_DELAY_TIERS,
  DEFAULT_PORTS,
  DEFAULT_TENANT,
  DEFAULT_TOPICS,
  KEYRING_KEY_ID_PATTERN,
  LIMITS,
  OPERATOR_EVENT_DEFAULTS,
  OPERATOR_EVENTS_DESTINATION_ID,
  RESERVED_HEADERS,
} from './constants.ts';
export { type ConfigLayer, ConfigStore, type ReloadStep } from './config-store.ts';
export { formatDuration, parseDuration } from './duration.ts';
export { DEMO_CONFIG_PATH, readEnv, requireBrokers, requireConfigPath, type SluiceEnv } from './env.ts';
export { DestinationIds } from './semantic-checks.ts';
export {
  type DestinationContext,
  type DestinationDefinition,
  validateDestination,
} from './destination.ts';
export { ConfigError } from './errors.ts';
export { type SourceFields, validateSource } from './source.ts';
export { loadConfigFile, parseConfig, readConfigFile } from './load.ts';
export { literalSecretFields } from './literal-secrets.ts';
export { transportWarnings } from './connection-security.ts';
export { ConfigSchema, type RawConfig } from './schema.ts';
export { DEFAULT_SIGNING_SCHEMES, SIGNING_SCHEMES, type SigningScheme } from './signing-schema.ts';
export { type Secret, secretResolver } from './secrets.ts';
export type {
  BatchSettings,
  Destination,
  DestinationSigning,
  Endpoint,
  Source,
  SluiceConfig,
  TopicNames,
  KafkaOidc,
  KafkaSasl,
  KafkaSecurity,
  KafkaSsl,
  OperatorEventsSettings,
  RuntimeDestinationsSettings,
  SchemaRegistryAccess,
} from './types.ts';
export { HOP_BY_HOP_HEADERS, headerNameProblem, headerValueProblem } from './header-rules.ts';
