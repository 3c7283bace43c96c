import { formatDuration, type SluiceConfig } from '@sluice/config';
import { delayTopicName } from '@sluice/topology';
import { INTAKE_GROUP_SUFFIX, TIER_GROUP_SUFFIX } from './constants.ts';
import type { BackoffSettings } from './domain/backoff.ts';
import { normaliseTiers } from './domain/tiers.ts';
import { InvalidRetrySettingsError } from './errors.ts';

/** What the retry service reads from the config, derived once per unit of work. */
export interface RetrySettings extends BackoffSettings {
  /** Ascending, unique. */
  tiersMs: number[];
  topics: { retry: string; redeliver: string; deadLetter: string; rejected: string };
  tierTopic: (tierMs: number) => string;
}

export function retrySettings(config: SluiceConfig): RetrySettings {
  const tiersMs = normaliseTiers(config.retry.tiersMs);
  if (tiersMs.length === 0) throw new InvalidRetrySettingsError('retry.tiers must name at least one tier');
  const { topics } = config.kafka;
  return {
    windowMs: config.retry.windowMs,
    scheduleMs: config.retry.scheduleMs,
    jitter: config.retry.jitter,
    tiersMs,
    topics: {
      retry: topics.retry,
      redeliver: topics.redeliver,
      deadLetter: topics.deadLetter,
      rejected: topics.rejected,
    },
    tierTopic: (ms) => delayTopicName(config, ms),
  };
}

export function intakeGroupId(config: SluiceConfig): string {
  return `${config.kafka.clientId}.${INTAKE_GROUP_SUFFIX}`;
}

export function tierGroupId(config: SluiceConfig, tierMs: number): string {
  return `${config.kafka.clientId}.${TIER_GROUP_SUFFIX}${formatDuration(tierMs)}`;
}
