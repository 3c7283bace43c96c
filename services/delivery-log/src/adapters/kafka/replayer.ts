import type { SluiceConfig } from '@sluice/config';
import { REPLAY_HEADERS, replayPositions, replayState, type DeadLetterFilter } from '@sluice/dead-letters';
import { encodeBody, renderBody } from '@sluice/webhook';
import { isJsonObject, recordKey, retryStateToHeaders, type EventEnvelope } from '@sluice/envelope';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import { MAX_REPLAY_LETTERS, REPLAY_IDLE_TIMEOUT_MS } from '../../constants.ts';
import type { MessageView } from '../db/read-store.ts';
import type { ReplayLog, ReplayRecord } from '../db/replay-log.ts';

export interface ReplayCounts {
  /** Dead letters (or delivered messages) that matched. */
  matched: number;
  /** Re-injected onto the redeliver topic. */
  replayed: number;
  /** Dead letters an earlier replay already re-injected (skipped). */
  skippedAlreadyReplayed: number;
}

export class ReplayTooLargeError extends Error {
  readonly code = 'replay_too_large';
  constructor(matched: number) {
    super(
      `the filter matches ${matched} dead letters; at most ${MAX_REPLAY_LETTERS} may be replayed at once, narrow it`,
    );
  }
}

/** A delivered message cannot be sent again (its event is not in the log, or it no longer renders). */
export class NotReplayableError extends Error {
  readonly code = 'not_replayable';
}

/**
 * Replays through the API, recorded in the log (`replays`). Dead letters are found in the log's
 * dead-letter index (`ReplayLog`: their place on the dead-letter topic) and only those records are
 * read and re-injected, exactly as `sluice dead-letters replay` does (`@sluice/dead-letters`: fresh
 * window, replay markers so a second replay, the CLI's too, skips them). A delivered message is
 * sent again the same way a replay re-injects a dead letter: a record on the redeliver topic with
 * the state `replayState` gives it, its body the webhook body the deliverer renders from the event
 * the log kept. Replays run one at a time.
 */
export class Replayer {
  #last: Promise<unknown> = Promise.resolve();
  #producer: SafeProducer | undefined;
  readonly #kafka: Kafka;
  readonly #config: () => SluiceConfig;
  readonly #log: ReplayLog;
  readonly #now: () => number;

  constructor(kafka: Kafka, config: () => SluiceConfig, log: ReplayLog, now: () => number) {
    this.#kafka = kafka;
    this.#config = config;
    this.#log = log;
    this.#now = now;
  }

  /** Replays the dead letters matching `filter`; each message it re-injected lists the replay. */
  replayFilter(filter: DeadLetterFilter): Promise<ReplayCounts> {
    return this.#serial(async () => {
      const { messages, ...result } = await this.#deadLetters(filter);
      await this.#record(filter, result, messages);
      return result;
    });
  }

  /**
   * Replays one message at the destinations named (dead ones through their dead letters,
   * delivered ones from the kept event).
   */
  replayMessage(message: MessageView, dead: string[], delivered: string[]): Promise<ReplayCounts> {
    return this.#serial(async () => {
      const { sourceId, messageId } = message;
      const total: ReplayCounts = { matched: 0, replayed: 0, skippedAlreadyReplayed: 0 };
      for (const destinationId of dead) {
        const { messages: _, ...r } = await this.#deadLetters({ sourceId, messageId, destinationId });
        await this.#record({ sourceId, messageId, destinationId }, r);
        add(total, r);
      }
      for (const destinationId of delivered) {
        const r = await this.#redeliver(message, destinationId);
        await this.#record({ sourceId, messageId, destinationId }, r);
        add(total, r);
      }
      return total;
    });
  }

  async close(): Promise<void> {
    await this.#last.catch(() => {});
    await this.#producer?.disconnect();
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#last.catch(() => {}).then(work);
    this.#last = run;
    return run;
  }

  async #deadLetters(
    filter: DeadLetterFilter,
  ): Promise<ReplayCounts & { messages: NonNullable<ReplayRecord['messages']> }> {
    const config = this.#config();
    const topic = config.kafka.topics.deadLetter;
    const match = await this.#log.match(topic, filter, MAX_REPLAY_LETTERS);
    if (match.notReplayed > MAX_REPLAY_LETTERS) throw new ReplayTooLargeError(match.notReplayed);
    const now = this.#now();
    const { replayed } = await replayPositions(this.#kafka, config, match.toReplay, {
      idleTimeoutMs: REPLAY_IDLE_TIMEOUT_MS,
      now: () => now,
    });
    await this.#log.markReplayed(topic, replayed, now);
    const done = new Set(replayed.map((p) => `${p.partition}:${p.offset}`));
    return {
      matched: match.matched,
      replayed: replayed.length,
      skippedAlreadyReplayed: match.skippedAlreadyReplayed,
      messages: match.toReplay.filter((l) => done.has(`${l.partition}:${l.offset}`)),
    };
  }

  async #redeliver(message: MessageView, destinationId: string): Promise<ReplayCounts> {
    const config = this.#config();
    const destination = config.destinations.find((d) => d.id === destinationId);
    const event = message.event;
    if (!destination) throw new NotReplayableError(`destination ${destinationId} is not in the config`);
    if (!isJsonObject(event)) throw new NotReplayableError('the event of this message is not in the log');
    const rendered = renderBody(event as EventEnvelope);
    if (!rendered.ok) throw new NotReplayableError(rendered.message);
    const now = this.#now();
    const state = replayState(
      {
        messageId: message.messageId,
        sourceId: message.sourceId,
        destinationId,
        eventType: message.eventType,
        endpoints: destination.endpoints.map((e) => e.ref),
        firstAttemptAt: now,
        attempts: 0,
        history: [],
        ...(typeof event.receivedAt === 'string' && { receivedAt: event.receivedAt }),
      },
      now,
    );
    if (!this.#producer) {
      this.#producer = new SafeProducer(this.#kafka);
      await this.#producer.connect();
    }
    await this.#producer.send(config.kafka.topics.redeliver, [
      {
        key: recordKey(event as EventEnvelope),
        value: encodeBody(rendered.body),
        headers: { ...retryStateToHeaders(state), [REPLAY_HEADERS.replayedAt]: String(now) },
      },
    ]);
    return { matched: 1, replayed: 1, skippedAlreadyReplayed: 0 };
  }

  #record(filter: DeadLetterFilter, r: ReplayCounts, messages?: ReplayRecord['messages']): Promise<void> {
    return this.#log.record({
      at: this.#now(),
      ...(filter.sourceId !== undefined &&
        filter.messageId !== undefined && { sourceId: filter.sourceId, messageId: filter.messageId }),
      ...(filter.destinationId !== undefined && { destinationId: filter.destinationId }),
      filter,
      replayed: r.replayed,
      matched: r.matched,
      ...(messages !== undefined && { messages }),
    });
  }
}

function add(total: ReplayCounts, r: ReplayCounts): void {
  total.matched += r.matched;
  total.replayed += r.replayed;
  total.skippedAlreadyReplayed += r.skippedAlreadyReplayed;
}
