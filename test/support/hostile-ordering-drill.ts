import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TestContext } from 'node:test';
import { ENVELOPE_LIMITS } from '@sluice/envelope';
import kafkajs from 'kafkajs';
import { createLogger } from '@sluice/logging';
import { metric, scrapeMetrics, sleep, testKafka, type TopicWatcher, waitUntil, watchTopics } from '@sluice/testkit';
import { percentile } from '../../bench/lib/ingest-load.ts';
import { DeadLetters, Receipts } from './drill-receipts.ts';
import { ledgerProperties } from './ledger.ts';
import { checkOrder } from './order-check.ts';
import { StatefulReceiver } from './order-receiver.ts';
import { Pipeline } from './pipeline.ts';
import { type KeyBytes, TopicBytes } from './topic-bytes.ts';
import { formatCensus, waitingCensus } from './waiting-census.ts';

const { Partitioners } = kafkajs;
/** The destinations with `ordering: per-user` (the pipeline's first, then two beside it), and the unordered one. */
export const ORDERED = ['ledger-hooks', 'ordered-b', 'ordered-c'] as const;
export const UNORDERED = 'unordered';
const DESTINATIONS: readonly string[] = [...ORDERED, UNORDERED];
/** The hostile user: its key (`<sourceId>:hostile-user`) is part of no other user's key. */
const HOSTILE_USER = 'hostile-user';

/**
 * Each `sluice.ordering` record written for the hostile user (key + value). The state of a user's
 * queue is bounded in bytes (docs/reference/ordering.md): it names the head and summarises what
 * waits, it does not list every waiting event (5,000 message ids of 128 escaped characters would be
 * over a megabyte, Kafka's default record limit).
 */
export const MAX_STATE_RECORD_BYTES = 4 * 1024;
/**
 * Bytes written to `sluice.ordering` for the hostile user over the whole drill, per hostile event
 * and ordered destination: a bounded record per step of its queue, linear in the events, where a
 * record that lists the queue makes the total grow with the square of it.
 */
export const MAX_STATE_BYTES_PER_EVENT = 1024;
/**
 * The deliverer's peak resident memory (VmHWM, else `process_resident_memory_bytes`), whatever one
 * user sends. It is 430–560 MB under this drill's load without a hostile user, ~600–620 MB under
 * the end-to-end benchmark (docs/operations.md, "Threads and memory": two isolates with 64 MB
 * semi-spaces); the bound stays under the 1 GiB Kubernetes limit and leaves room for garbage, not
 * for state per waiting event.
 */
export const MAX_DELIVERER_RSS_BYTES = 768 * 1024 * 1024;
/** Other users' p99 (ingest's acknowledgement → receipt) beside the hostile user: at most this × their p99 without it. */
export const MAX_P99_RATIO = 2;
/**
 * The baseline p99 the ratio is taken from is at least this: below it the p99 of a few thousand
 * deliveries on a shared 2-core machine is scheduling noise, and 2 × noise is no bound.
 */
export const P99_FLOOR_MS = 100;
/** The state meter stops counting past this × the total bound: the figure then only has to say "more". */
const STATE_COUNT_LIMIT = 4;
/** How long the pipeline has per phase beyond the sending (each wait names what it waited for). */
const PHASE_DEADLINE_MS = 120_000;
/** Once released, how long each hostile event may take on top of `PHASE_DEADLINE_MS` (it leaves one at a time). */
const DRAIN_MS_PER_EVENT = 30;
/** Calls per /v1/batch request. */
const BATCH = 100;

export interface HostileOrderingOptions {
  name: string;
  /** Events the hostile user sends, its head included. */
  hostileEvents: number;
  /** Other users, each sending one event per round, in both phases. */
  users: number;
  /** Rounds per phase. */
  rounds: number;
  /** Round k of a phase is sent k × roundMs after its first (once round k-1 is acknowledged). */
  roundMs: number;
  /** Partitions of every topic: few, so the hostile user shares its partition with many others. */
  partitions: number;
}

let running: { pipeline: Pipeline; meter?: TopicBytes; deadLetters?: TopicWatcher } | undefined;
/** Ends what the drill started, whether it passed or failed (a drill file's `after`). */
export async function closeHostileOrderingDrill(): Promise<void> {
  const r = running;
  running = undefined;
  await r?.meter?.stop();
  await r?.deadLetters?.stop();
  await r?.pipeline.close();
}

/** A 128-character message id, unique by its number, the rest alternately `"` and `\` (escaped in JSON, and in headers as is). */
export function hostileMessageId(n: number): string {
  let id = `h${n}:`;
  while (id.length < ENVELOPE_LIMITS.messageIdMaxChars) id += id.length % 2 === 0 ? '"' : '\\';
  return id;
}

/** The figures of one run, filled as the phases pass: the summary line prints what is known. */
interface Figures {
  p99A?: number;
  p99B?: number;
  othersB?: { events: number; p50: number; max: number };
  state?: KeyBytes;
  stateWhileStuck?: KeyBytes;
  rss?: { now: number; peak: number };
  /** The same after phase A (the hostile user not yet there). */
  rssA?: { now: number; peak: number };
  heldMs?: number;
  drainMs?: number;
  lost?: number;
  deadLettered?: number;
  reorderedUsers?: number;
  attemptsAhead?: number;
  duplicates?: number;
  /** This process's worst event-loop delay: how late its receivers could answer. */
  loopDelayMaxMs?: number;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const stateText = (s: KeyBytes | undefined) =>
  !s
    ? '?'
    : s.overflowed
      ? `over ${s.bytes} B in ${s.records}+ records under ${s.keys} key(s), largest ≥ ${s.largest} B (counting stopped past ${STATE_COUNT_LIMIT} × the bound)`
      : `${s.bytes} B in ${s.records} records under ${s.keys} key(s), largest ${s.largest} B`;

function summaryLine(o: HostileOrderingOptions, f: Figures): string {
  const ratio = f.p99A !== undefined && f.p99B !== undefined ? (f.p99B / f.p99A).toFixed(2) : '?';
  return (
    `hostile-ordering[${o.name}]: hostile ${o.hostileEvents} events, others ${o.users} users × ${o.rounds} rounds per phase, ` +
    `${o.partitions} partitions | others' ack→receipt p99 alone ${f.p99A ?? '?'} ms, beside the hostile user ` +
    `${f.p99B ?? '?'} ms (ratio ${ratio}, bound ${MAX_P99_RATIO} × max(alone, ${P99_FLOOR_MS} ms))` +
    `${f.othersB ? `, p50 ${f.othersB.p50} ms, max ${f.othersB.max} ms over ${f.othersB.events}` : ''} | ` +
    `sluice.ordering for the hostile key: while held ${stateText(f.stateWhileStuck)}; whole run ${stateText(f.state)} ` +
    `(bounds: each ≤ ${MAX_STATE_RECORD_BYTES} B, total ≤ ${o.hostileEvents * ORDERED.length * MAX_STATE_BYTES_PER_EVENT} B) | ` +
    `deliverer RSS after phase A ${f.rssA ? mb(f.rssA.now) : '?'}, at the end ${f.rss ? `${mb(f.rss.now)}, peak ${mb(f.rss.peak)}` : '?'} ` +
    `(bound ${mb(MAX_DELIVERER_RSS_BYTES)}) | ` +
    `held ${f.heldMs ?? '?'} ms, drained ${f.drainMs ?? '?'} ms after release | lost ${f.lost ?? '?'}, ` +
    `dead-lettered ${f.deadLettered ?? '?'}, reordered users ${f.reorderedUsers ?? '?'}, attempts ahead ` +
    `${f.attemptsAhead ?? '?'}, duplicates ${f.duplicates ?? '?'} | receivers' event-loop delay max ${f.loopDelayMaxMs ?? '?'} ms`
  );
}

/** The bounds on the hostile user's state and the deliverer's memory that the figures measured so far break. */
function memoryBounds(o: HostileOrderingOptions, f: Figures): string[] {
  const broken: string[] = [];
  const stateBound = o.hostileEvents * ORDERED.length * MAX_STATE_BYTES_PER_EVENT;
  if (f.state && f.state.largest > MAX_STATE_RECORD_BYTES)
    broken.push(
      `a sluice.ordering record of the hostile user is ${f.state.overflowed ? 'at least ' : ''}${f.state.largest} B (bound ${MAX_STATE_RECORD_BYTES} B each)`,
    );
  if (f.state && (f.state.overflowed || f.state.bytes > stateBound))
    broken.push(
      `${f.state.overflowed ? 'over ' : ''}${f.state.bytes} B written to sluice.ordering for the hostile user ` +
        `(bound ${stateBound} B: ${o.hostileEvents} events × ${ORDERED.length} destinations × ${MAX_STATE_BYTES_PER_EVENT} B)`,
    );
  if (f.rss && f.rss.peak > MAX_DELIVERER_RSS_BYTES)
    broken.push(`the deliverer's peak RSS is ${mb(f.rss.peak)} (bound ${mb(MAX_DELIVERER_RSS_BYTES)})`);
  return broken;
}

/** CPU seconds (user + system) a process has used, from /proc; undefined without /proc or the process. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields 14 and 15 (utime, stime) after the parenthesised command name, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds the whole machine was busy (every core), from /proc/stat. */
function machineBusySeconds(): number | undefined {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    return ticks.slice(0, 8).reduce((sum, n, i) => (i === 3 || i === 4 ? sum : sum + n), 0) / 100;
  } catch {
    return undefined;
  }
}

/**
 * Where the CPU went since the last call: per service process, this process (load generator and
 * receivers), and the rest of the machine (the broker and anything else), in CPU seconds.
 */
function cpuSplit(p: Pipeline): () => string {
  const read = () => {
    const parts = new Map<string, number | undefined>();
    for (const svc of p.services.values()) parts.set(svc.name, cpuSeconds(svc.child?.pid));
    const self = process.cpuUsage();
    parts.set('drill', (self.user + self.system) / 1e6);
    parts.set('machine', machineBusySeconds());
    return parts;
  };
  let before = read();
  return () => {
    const now = read();
    const used = (name: string) => {
      const [a, b] = [before.get(name), now.get(name)];
      return a === undefined || b === undefined ? undefined : b - a;
    };
    const names = [...now.keys()].filter((n) => n !== 'machine');
    const known = names.reduce((sum, n) => sum + (used(n) ?? 0), 0);
    const machine = used('machine');
    const text = names.map((n) => `${n} ${used(n)?.toFixed(1) ?? '?'}`);
    if (machine !== undefined) text.push(`rest (broker, other) ${(machine - known).toFixed(1)}`);
    before = now;
    return `CPU s: ${text.join(', ')}`;
  };
}

/** The deliverer's resident memory now (its /metrics) and at its peak (the kernel's high-water mark). */
async function delivererMemory(p: Pipeline): Promise<{ now: number; peak: number }> {
  const svc = p.service('deliverer');
  const now = await metric(svc.url, 'process_resident_memory_bytes');
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${svc.child?.pid}/status`, 'utf8'));
    return { now, peak: Math.max(now, Number(hwm?.[1] ?? 0) * 1024) };
  } catch {
    // No /proc (not Linux): the scrape is the only figure.
    return { now, peak: now };
  }
}

/**
 * The hostile-ordering drill (docs/operations.md, "How ordering is tested"): three ordered
 * destinations and an unordered one on one source. Phase A: other users alone, their p99. Then a
 * hostile user's head is answered 503 by the three ordered endpoints, and phase B sends the same
 * other users' rounds while the hostile user sends thousands of events with 128-character message
 * ids full of `"` and `\`. Bounds: the others keep flowing everywhere within 2 × their p99, the
 * hostile user's state records stay small, the deliverer's memory stays bounded; once released,
 * the hostile user's events go out in order everywhere, none lost.
 */
export async function hostileOrderingDrill(t: TestContext, o: HostileOrderingOptions): Promise<void> {
  const receivers = new Map<string, StatefulReceiver>(
    DESTINATIONS.map((d, i) => [
      d,
      new StatefulReceiver({
        seed: i + 1,
        failRate: 0,
        ...(d !== UNORDERED && { stuckUser: HOSTILE_USER, stuckMs: Number.POSITIVE_INFINITY }),
      }),
    ]),
  );
  const ordered = { ordering: 'per-user' };
  const pipeline = await Pipeline.start({
    endpoints: [receivers.get(ORDERED[0])!.behaviour],
    destination: ordered,
    beside: [
      ...ORDERED.slice(1).map((id) => ({ id, endpoint: receivers.get(id)!.behaviour, destination: ordered })),
      { id: UNORDERED, endpoint: receivers.get(UNORDERED)!.behaviour },
    ],
    partitions: o.partitions,
    config: {
      // Shrunk retry tiers (the default schedule starts at 30 s): the released head goes out within 2 s.
      retry: { window: '30m', schedule: ['1s', '2s'], tiers: ['1s', '2s'] },
      // A request starved past its timeout on a loaded machine opens the circuit: for 1 s, not 30.
      delivery: { circuitBreaker: { cooldown: '1s' } },
    },
  });
  const p = pipeline;
  running = { pipeline };
  const sourceId = (p.raw.sources as { id: string }[])[0]!.id;
  const hostileKey = `${sourceId}:${HOSTILE_USER}`;
  const kafka = testKafka({
    brokers: p.brokers.split(','),
    clientId: 'hostile-drill',
    logger: createLogger({ name: 'hostile-drill', level: 'error' }),
  });
  const stateBound = o.hostileEvents * ORDERED.length * MAX_STATE_BYTES_PER_EVENT;
  const meter = await TopicBytes.start(kafka, p.topics.ordering!, {
    matches: (key) => key.includes(hostileKey),
    stopAfterBytes: STATE_COUNT_LIMIT * stateBound,
  });
  running.meter = meter;
  const deadLetterWatcher = await watchTopics(kafka, [p.topics.deadLetter!]);
  running.deadLetters = deadLetterWatcher;
  const deadLetters = new DeadLetters({
    watcher: deadLetterWatcher,
    topic: p.topics.deadLetter!,
    ledger: p.ledger,
    destinations: DESTINATIONS,
  });
  const receipts = new Receipts(p.ledger, DESTINATIONS);
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  t.diagnostic(`load average at the start: ${load()}`);

  const users = Array.from({ length: o.users }, (_, i) => `user-${i}`);
  const accepted = new Map<string, string[]>([...users, HOSTILE_USER].map((u) => [u, []]));
  const ackedAt = new Map<string, number>();
  const f: Figures = {};
  // The receivers run in this process: its event-loop delay says how late they could answer.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  let phaseFrom = Date.now();
  const cpu = cpuSplit(p);
  const phase = (name: string) => {
    t.diagnostic(
      `${name} done in ${Date.now() - phaseFrom} ms; load ${load()}; this process's event-loop delay max ${Math.round(loopDelay.max / 1e6)} ms; ${cpu()}`,
    );
    phaseFrom = Date.now();
  };
  let printed = false;
  const print = () => {
    f.loopDelayMaxMs = Math.round(loopDelay.max / 1e6);
    loopDelay.disable();
    const line = summaryLine(o, f);
    if (!printed) {
      t.diagnostic(line);
      console.log(line);
    }
    printed = true;
    return line;
  };
  /** Which user sent each event. */
  const userOf = new Map<string, string>();
  /** (event, destination) pairs neither received nor dead-lettered there. */
  const pendingPairs = (ids: Iterable<string>, destinations: readonly string[] = DESTINATIONS) => {
    const dead = deadLetters.read();
    const pairs: { id: string; destination: string }[] = [];
    for (const id of ids)
      for (const d of destinations)
        if (receipts.at(d, id) === undefined && !dead.get(d)!.has(id)) pairs.push({ id, destination: d });
    return pairs;
  };
  const pending = (ids: Iterable<string>, destinations?: readonly string[]) => pendingPairs(ids, destinations).length;
  /** What is still pending, per destination and how many users it is from (a held partition shows as a share of them). */
  const pendingText = (ids: Iterable<string>, destinations?: readonly string[]) => {
    const pairs = pendingPairs(ids, destinations);
    const per = DESTINATIONS.map((d) => `${d} ${pairs.filter((x) => x.destination === d).length}`).join(', ');
    const from = new Set(pairs.map((x) => userOf.get(x.id)));
    return `still pending: ${per} (from ${from.size} user(s))`;
  };
  /** Waits for an observable effect; a service that exited by itself ends the wait with its output. */
  const until = async <T>(what: string, timeoutMs: number, check: () => T | Promise<T>, detail?: () => string) => {
    try {
      return await waitUntil(
        () => {
          const exits = p.unexpectedExits();
          if (exits.length > 0) throw new Error(`waiting for ${what}: ${exits.join('\n')}`);
          return check();
        },
        timeoutMs,
        what,
      );
    } catch (err) {
      throw detail ? new Error(`${(err as Error).message}; ${detail()}`, { cause: err }) : err;
    }
  };
  /** Ingest's acknowledgement → the first 2xx, per event and destination. */
  const latencies = (ids: readonly string[]) =>
    ids.flatMap((id) => DESTINATIONS.map((d) => receipts.at(d, id)! - ackedAt.get(id)!)).filter(Number.isFinite);

  /** One round: every other user's next event, acknowledged before the next round. */
  const sendRound = async (round: number): Promise<string[]> => {
    const calls = users.map((userId) => {
      const messageId = p.nextMessageId();
      userOf.set(messageId, userId);
      return { type: 'track', messageId, userId, event: 'Drill Step', properties: ledgerProperties(round) };
    });
    const batches = Array.from({ length: Math.ceil(calls.length / BATCH) }, (_, i) =>
      calls.slice(i * BATCH, (i + 1) * BATCH),
    );
    const sent = await p.postCalls(batches, { concurrency: 2 });
    for (const id of sent.ids) accepted.get(userOf.get(id)!)!.push(id);
    for (const [id, at] of sent.ackedAt) ackedAt.set(id, at);
    return sent.ids;
  };
  const paced = async (each: (round: number) => Promise<void>) => {
    const t0 = Date.now();
    for (let k = 0; k < o.rounds; k++) {
      const due = t0 + k * o.roundMs;
      if (due > Date.now()) await sleep(due - Date.now());
      await each(k);
    }
  };
  /** The hostile user's events, one request at a time so that the order sent is the order accepted. */
  const sendHostile = async (from: number, to: number) => {
    for (let i = from; i < to; i += BATCH) {
      const calls = Array.from({ length: Math.min(BATCH, to - i) }, (_, j) => ({
        type: 'track',
        messageId: hostileMessageId(i + j),
        userId: HOSTILE_USER,
        event: 'Hostile Step',
        properties: ledgerProperties(i + j),
      }));
      for (const call of calls) userOf.set(call.messageId, HOSTILE_USER);
      const sent = await p.postCalls([calls], { concurrency: 1 });
      accepted.get(HOSTILE_USER)!.push(...sent.ids);
      for (const [id, at] of sent.ackedAt) ackedAt.set(id, at);
    }
  };

  try {
    // Warm-up (not measured): every consumer assigned, every endpoint's connections open.
    const warm = await sendRound(-1);
    await until(
      'the warm-up round delivered at every destination',
      PHASE_DEADLINE_MS,
      () => pending(warm) === 0,
      () => pendingText(warm),
    );
    phase('warm-up');

    // Phase A: the other users alone.
    const idsA: string[] = [];
    await paced(async (k) => void idsA.push(...(await sendRound(k))));
    await until(
      'phase A delivered at every destination',
      PHASE_DEADLINE_MS,
      () => pending(idsA) === 0,
      () => pendingText(idsA),
    );
    f.p99A = percentile(latencies(idsA), 99);
    f.rssA = await delivererMemory(p);
    phase('phase A');

    // The hostile user's head: answered 503 by the three ordered endpoints (delivered at the unordered one).
    await sendHostile(0, 1);
    const head = hostileMessageId(0);
    const heldFrom = Date.now();
    await until('the head answered 503 at the three ordered destinations', PHASE_DEADLINE_MS, () =>
      ORDERED.every((d) =>
        p.ledger.arrivals.some((a) => a.destination === d && a.messageId === head && a.status === 503),
      ),
    );

    // Phase B: the same rounds, and the hostile user's events spread over them.
    const idsB: string[] = [];
    const share = Math.ceil((o.hostileEvents - 1) / o.rounds);
    await Promise.all([
      paced(async (k) => void idsB.push(...(await sendRound(k)))),
      paced((k) => sendHostile(1 + k * share, Math.min(o.hostileEvents, 1 + (k + 1) * share))),
    ]);
    const hostileIds = accepted.get(HOSTILE_USER)!;
    await until(
      "phase B's other users delivered at every destination (the hostile user held)",
      PHASE_DEADLINE_MS,
      () => pending(idsB) === 0,
      () => pendingText(idsB),
    );
    phase('phase B');
    // Where the others' tail is: per destination, and how long the deliverer's side records took.
    t.diagnostic(
      `phase B p99 per destination: ${DESTINATIONS.map(
        (d) =>
          `${d} ${percentile(
            idsB.map((id) => receipts.at(d, id)! - ackedAt.get(id)!),
            99,
          )} ms`,
      ).join(', ')}`,
    );
    const writes = (await scrapeMetrics(p.service('deliverer').url))
      .split('\n')
      .filter((l) => l.startsWith('sluice_side_record_write_seconds_bucket') && !l.includes('+Inf'));
    t.diagnostic(
      `deliverer side-record write times so far: ${writes.map((l) => l.replace(/^.*le="([^"]+)".*\} /, '≤$1s:')).join(' ')}`,
    );
    const others = latencies(idsB);
    f.p99B = percentile(others, 99);
    // Whether the tail is the hostile user's partition (its records ahead of theirs) or everywhere (CPU).
    const hostilePartition = partitionOf(hostileKey, o.partitions);
    const sameTopicPartition = (id: string) =>
      partitionOf(`${sourceId}:${userOf.get(id)}`, o.partitions) === hostilePartition;
    t.diagnostic(
      `phase B others' p99 in the hostile user's partition ${percentile(latencies(idsB.filter(sameTopicPartition)), 99)} ms, ` +
        `in the others ${percentile(latencies(idsB.filter((id) => !sameTopicPartition(id))), 99)} ms; ` +
        `phase A: ${percentile(latencies(idsA.filter(sameTopicPartition)), 99)} ms and ${percentile(latencies(idsA.filter((id) => !sameTopicPartition(id))), 99)} ms`,
    );
    f.othersB = { events: others.length, p50: percentile(others, 50), max: Math.max(...others) };
    await until(
      "the hostile user's events delivered at the unordered destination",
      PHASE_DEADLINE_MS,
      () => pending(hostileIds, [UNORDERED]) === 0,
      () => pendingText(hostileIds, [UNORDERED]),
    );
    // Every later event of the hostile user waits at each ordered destination (or the documented cap dead-lettered it).
    const waitingExpected = () => {
      const dead = deadLetters.read();
      return ORDERED.reduce((n, d) => n + hostileIds.slice(1).filter((id) => !dead.get(d)!.has(id)).length, 0);
    };
    let waiting = 0;
    await until(
      'every later hostile event waiting behind its head (sluice_deliverer_ordering_waiting_total)',
      PHASE_DEADLINE_MS,
      async () => {
        waiting = await metric(p.service('deliverer').url, 'sluice_deliverer_ordering_waiting_total');
        return waiting >= waitingExpected();
      },
      () => `${waiting} of ${waitingExpected()} waiting`,
    );
    phase('hostile events waiting');
    f.stateWhileStuck = await meter.caughtUp(PHASE_DEADLINE_MS);
    f.rss = await delivererMemory(p);
    const stillHeld = ORDERED.every((d) => receivers.get(d)!.applied.every((a) => a.user !== HOSTILE_USER));

    // Release: the endpoints accept the hostile user again; its head goes at its next retry, then the rest in order.
    for (const d of ORDERED) receivers.get(d)!.release();
    const releasedAt = Date.now();
    f.heldMs = releasedAt - heldFrom;
    const all = [...accepted.values()].flat();
    await until(
      "every event delivered at every destination (or dead-lettered there) after the hostile user's release",
      PHASE_DEADLINE_MS + o.hostileEvents * DRAIN_MS_PER_EVENT,
      () => pending(all) === 0,
      () => pendingText(all),
    );
    f.drainMs = Date.now() - releasedAt;
    phase('drained');
    f.state = await meter.caughtUp(PHASE_DEADLINE_MS);
    f.rss = await delivererMemory(p);

    const dead = deadLetters.read();
    f.lost = pending(p.ledger.acked);
    f.deadLettered = [...dead.values()].reduce((n, ids) => n + ids.size, 0);
    const summary = p.report(t, o.name);
    f.duplicates = summary.duplicates;
    const reports = ORDERED.map((d) =>
      checkOrder({
        accepted,
        ackedAt,
        applied: receivers.get(d)!.applied,
        arrivals: p.ledger.arrivals.filter((a) => a.destination === d),
        deadLettered: new Set(dead.get(d)!.keys()),
      }),
    );
    f.reorderedUsers = reports.reduce((n, r) => n + r.reordered.length, 0);
    f.attemptsAhead = reports.reduce((n, r) => n + r.attemptsAhead, 0);
    const line = print();
    t.diagnostic(`load average at the end: ${load()}`);
    for (const [d, ids] of dead)
      if (ids.size > 0)
        t.diagnostic(
          `dead-lettered at ${d}: ${ids.size}, e.g. ${[...ids].slice(0, 2).map(([id, why]) => `${id}: ${why}`)}`,
        );

    const broken: string[] = [];
    const bound = (ok: boolean, what: string) => ok || broken.push(what);
    bound(
      summary.acked === summary.sent,
      `ingest acknowledged ${summary.acked} of the ${summary.sent} events sent (each must be, to be checked)`,
    );
    bound(stillHeld, 'no hostile event was delivered at an ordered destination while its head was answered 503');
    bound(
      f.p99B <= MAX_P99_RATIO * Math.max(f.p99A, P99_FLOOR_MS),
      `the other users' p99 beside the hostile user, ${f.p99B} ms, is over ${MAX_P99_RATIO} × max(their p99 alone, ${P99_FLOOR_MS} ms) = ${MAX_P99_RATIO * Math.max(f.p99A, P99_FLOOR_MS)} ms`,
    );
    broken.push(...memoryBounds(o, f));
    bound(f.lost === 0, `${f.lost} (event, destination) pairs neither delivered nor dead-lettered`);
    bound(
      [...dead.values()].every((ids) => [...ids.keys()].every((id) => hostileIds.includes(id))),
      "another user's event was dead-lettered (their endpoints answer 2xx: only the held user's cap may dead-letter)",
    );
    reports.forEach((r, i) => {
      const examples = r.reordered.slice(0, 2).map((x) => `${x.user} at positions ${x.appliedPositions.slice(-3)}`);
      bound(
        r.reordered.length === 0,
        `${ORDERED[i]}: ${r.reordered.length} users applied out of acceptance order (${examples.join('; ')})`,
      );
      bound(
        r.attemptsAhead === 0,
        `${ORDERED[i]}: ${r.attemptsAhead} attempts of an event while an earlier one of its user was pending`,
      );
    });
    assert.deepEqual(broken, [], `${broken.length} bound(s) broken:\n- ${broken.join('\n- ')}\n${line}`);
  } catch (err) {
    if (printed) throw err;
    // A wait timed out or a service exited: print what was measured so far with it.
    f.state ??= meter.counted;
    f.rss ??= await delivererMemory(p).catch(() => undefined);
    const line = print();
    for (const svc of p.services.values()) t.diagnostic(`${svc.name} logged:\n${svc.output.slice(-2_000)}`);
    // Where a stalled run stands: the deliverer's lag per waiting partition, its ordering state and held bytes.
    // Twice, 5 s apart: a partition that stopped being read shows the same lines; one going round moves.
    for (const when of ['at the failure', '5 s later']) {
      if (when !== 'at the failure') await sleep(5_000);
      const state = await scrapeMetrics(p.service('deliverer').url).catch(() => '');
      const stalled = state
        .split('\n')
        .filter(
          (l) =>
            /^sluice_(consumer_lag\{[^}]*waiting|deliverer_ordering_|deliverer_in_flight|consumer_partition_paused)/.test(
              l,
            ) ||
            (/^sluice_consumer_records_in_hand\{/.test(l) && !l.endsWith(' 0')),
        );
      t.diagnostic(`deliverer state ${when}:\n${stalled.join('\n')}`);
    }
    // Where each of the hostile user's queues stands, as last written to sluice.ordering, and
    // which of its places have a record on the waiting topic (is the front there, copied, missing?).
    t.diagnostic(
      `the hostile user's last state records: ${[...meter.lastValues].map(([k, v]) => `${k} = ${v ?? 'tombstone'}`).join(' | ')}`,
    );
    for (const d of ORDERED) {
      const value = meter.lastValues.get(`${d}/${hostileKey}`);
      const queue = value ? (JSON.parse(value) as { first?: number; next?: number }) : undefined;
      const groupId = `${(p.raw.kafka as { clientId: string }).clientId}.deliverer`;
      const census = await waitingCensus(
        kafka,
        { topic: `${p.topics.waitingPrefix}${d}`, key: hostileKey, groupId },
        60_000,
      ).catch((e: unknown) => e as Error);
      t.diagnostic(
        `the hostile user's waiting records at ${d}: ${census instanceof Error ? census.message : formatCensus(census, queue)}`,
      );
    }
    const also = memoryBounds(o, f);
    const alsoText = also.length > 0 ? `\nbroken too, by what was measured up to then:\n- ${also.join('\n- ')}` : '';
    throw new Error(`${(err as Error).message}${alsoText}\n${line}`, { cause: err });
  }
}

/** The partition kafkajs's default partitioner (what ingest produces with) gives a key. */
function partitionOf(key: string, partitions: number): number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
    offlineReplicas: [],
  }));
  return partitioner({ topic: 'events', partitionMetadata, message: { key, value: null } });
}
