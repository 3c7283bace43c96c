import { InvalidFilterError, listDeadLetters, replayDeadLetters, type DeadLetter } from '@sluice/dead-letters';
import { filterFromFlags, type DlqFilterFlags } from '../domain/dlq-filter.ts';
import { CliError, type CliIo } from '../io.ts';
import { openKafkaSession } from '../kafka-session.ts';

export interface DlqListFlags extends DlqFilterFlags {
  config?: string;
  json?: boolean;
}

export interface DlqReplayFlags extends DlqFilterFlags {
  config?: string;
  dryRun?: boolean;
}

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

function summary(letter: DeadLetter): string {
  const s = letter.state;
  return [
    iso(s.deadAt),
    s.deadReason ?? '-',
    `destination=${s.destinationId}`,
    `source=${s.sourceId}`,
    `type=${s.eventType}`,
    `messageId=${s.messageId}`,
    `attempts=${s.attempts}`,
    `lastError=${s.lastError ?? '-'}`,
    ...(letter.replayedAt !== undefined ? [`replayedAt=${iso(letter.replayedAt)}`] : []),
  ].join('  ');
}

function json(letter: DeadLetter): string {
  return JSON.stringify({
    partition: letter.partition,
    offset: letter.offset,
    ...letter.state,
    ...(letter.replayedAt !== undefined && { replayedAt: letter.replayedAt }),
    body: letter.value?.toString('utf8') ?? null,
  });
}

async function withFilterErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof InvalidFilterError) throw new CliError(err.message);
    throw err;
  }
}

/** `sluice dlq list [filters] [--json]`: the dead letters on the config's dead-letter topic. */
export async function dlqList(io: CliIo, flags: DlqListFlags): Promise<void> {
  const filter = filterFromFlags(flags);
  const { config, kafka } = openKafkaSession(io, flags.config);
  const { letters, unreadable } = await withFilterErrors(() => listDeadLetters(kafka, config, filter));
  for (const letter of letters) io.stdout(`${flags.json ? json(letter) : summary(letter)}\n`);
  if (!flags.json)
    io.stderr(`${letters.length} dead letters${unreadable > 0 ? ` (${unreadable} unreadable records skipped)` : ''}\n`);
}

/** `sluice dlq replay [filters] [--dry-run]`: re-inject onto the redeliver topic with a fresh window. */
export async function dlqReplay(io: CliIo, flags: DlqReplayFlags): Promise<void> {
  const filter = filterFromFlags(flags);
  const { config, kafka } = openKafkaSession(io, flags.config);
  const result = await withFilterErrors(() =>
    replayDeadLetters(kafka, config, filter, { dryRun: flags.dryRun ?? false }),
  );
  for (const letter of result.letters)
    io.stdout(`${result.dryRun ? 'would replay' : 'replayed'}  ${summary(letter)}\n`);
  const skipped =
    result.skippedAlreadyReplayed > 0 ? `, ${result.skippedAlreadyReplayed} skipped (already replayed)` : '';
  io.stdout(
    result.dryRun
      ? `dry run: ${result.letters.length} of ${result.matched} matching dead letters would be replayed${skipped}\n`
      : `replayed ${result.replayed} of ${result.matched} matching dead letters${skipped}\n`,
  );
}
