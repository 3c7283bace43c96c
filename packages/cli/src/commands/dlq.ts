import {
  executeReplay,
  forEachDeadLetter,
  InvalidFilterError,
  planReplay,
  type DeadLetter,
  type ReadOptions,
  type ReplayPlan,
} from '@sluice/dead-letters';
import { describeFilter, filterFromFlags, hasFilter, type DlqFilterFlags } from '../domain/dlq-filter.ts';
import { CliError, type CliIo } from '../io.ts';
import { openKafkaSession } from '../kafka-session.ts';
import { ProgressLine, progressText } from '../progress-line.ts';

export interface DlqListFlags extends DlqFilterFlags {
  config?: string;
  json?: boolean;
  limit?: number;
}

export interface DlqReplayFlags extends DlqFilterFlags {
  config?: string;
  all?: boolean;
  dryRun?: boolean;
  yes?: boolean;
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

/** Progress of both passes over the dead-letter topic, on the terminal only. */
function progressOptions(progress: ProgressLine, matched: () => number): ReadOptions {
  return {
    onProgress: (phase, { read, total }) =>
      progress.update(() =>
        phase === 'replay-markers'
          ? progressText('replay markers', read, total)
          : progressText('dead letters', read, total, `, ${matched().toLocaleString('en-US')} matched`),
      ),
  };
}

/** Writes one line to stdout without letting it pile up in memory (the progress line is erased first). */
async function writeLine(io: CliIo, progress: ProgressLine, line: string): Promise<void> {
  progress.clear();
  io.stdout(`${line}\n`);
  await io.stdoutDrained?.();
}

/**
 * `sluice dlq list [filters] [--limit N] [--json]`: streams the dead letters on the config's
 * dead-letter topic, one line each, as they are read.
 */
export async function dlqList(io: CliIo, flags: DlqListFlags): Promise<void> {
  const filter = filterFromFlags(flags);
  const { config, kafka } = openKafkaSession(io, flags.config);
  const progress = new ProgressLine(io);
  let matched = 0;
  const read = await withFilterErrors(() =>
    forEachDeadLetter(
      kafka,
      config,
      filter,
      async (letter) => {
        matched += 1;
        await writeLine(io, progress, flags.json ? json(letter) : summary(letter));
      },
      { ...progressOptions(progress, () => matched), ...(flags.limit !== undefined && { limit: flags.limit }) },
    ),
  );
  progress.clear();
  if (flags.json) return;
  const notes = [
    ...(read.limited ? [`--limit ${flags.limit} reached`] : []),
    ...(read.unreadable > 0 ? [`${read.unreadable} unreadable records skipped`] : []),
  ];
  io.stderr(`${read.matched} dead letters${notes.length > 0 ? ` (${notes.join('; ')})` : ''}\n`);
}

const countList = (tally: Record<string, number>) =>
  Object.entries(tally)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');

/** What a replay is about to do, before it does anything. */
function describePlan(plan: ReplayPlan, filterText: string): string[] {
  const skipped = plan.skippedAlreadyReplayed > 0 ? `; ${plan.skippedAlreadyReplayed} already replayed, skipped` : '';
  const lines = [
    `replay plan: ${plan.toReplay} dead letters to replay (${plan.matched} match ${filterText}${skipped})`,
  ];
  if (plan.toReplay > 0) {
    lines.push(`  by destination: ${countList(plan.byDestination)}`, `  by reason: ${countList(plan.byReason)}`);
    if (plan.firstDeadAt !== undefined) {
      lines.push(`  died between ${iso(plan.firstDeadAt)} and ${iso(plan.lastDeadAt)}`);
    }
  }
  return lines;
}

/**
 * `sluice dlq replay (filters | --all) [--dry-run] [--yes]`: shows what it will replay, asks on a
 * terminal, then re-injects onto the redeliver topic with a fresh window.
 */
export async function dlqReplay(io: CliIo, flags: DlqReplayFlags): Promise<void> {
  const filter = filterFromFlags(flags);
  if (hasFilter(filter) === (flags.all === true)) {
    throw new CliError(
      flags.all
        ? 'dlq replay: --all replays every dead letter; leave out the filters, or drop --all'
        : 'dlq replay: give a filter (--destination, --source, --reason, --since, --until) or --all',
    );
  }
  const { config, kafka } = openKafkaSession(io, flags.config);
  const progress = new ProgressLine(io);
  let seen = 0;
  const plan = await withFilterErrors(() =>
    planReplay(
      kafka,
      config,
      filter,
      progressOptions(progress, () => seen),
    ),
  );
  progress.clear();
  for (const line of describePlan(plan, describeFilter(filter))) io.stdout(`${line}\n`);
  const skipped = plan.skippedAlreadyReplayed > 0 ? `, ${plan.skippedAlreadyReplayed} skipped (already replayed)` : '';
  if (plan.toReplay === 0) {
    io.stdout(`replayed 0 of ${plan.matched} matching dead letters${skipped}\n`);
    return;
  }
  const dryRun = flags.dryRun ?? false;
  if (!dryRun && !flags.yes && io.confirm) {
    const topic = config.kafka.topics.redeliver;
    if (!(await io.confirm(`Replay ${plan.toReplay} dead letters onto ${topic}?`))) {
      throw new CliError('replay cancelled: nothing replayed');
    }
  }
  const result = await executeReplay(kafka, config, plan, {
    dryRun,
    ...progressOptions(progress, () => seen),
    onLetter: async (letter) => {
      seen += 1;
      await writeLine(io, progress, `${dryRun ? 'would replay' : 'replayed'}  ${summary(letter)}`);
    },
  });
  progress.clear();
  io.stdout(
    result.dryRun
      ? `dry run: ${plan.toReplay} of ${result.matched} matching dead letters would be replayed${skipped}\n`
      : `replayed ${result.replayed} of ${result.matched} matching dead letters${skipped}\n`,
  );
}
