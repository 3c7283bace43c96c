import { type Kafka, type RetryKafka, readWholeTopic } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { Keyring } from '@sluice/secret-keyring';
import { CatalogFollower } from '../catalog-follower.ts';
import { CatalogKeyringError } from '../errors.ts';

export interface CatalogReaderOptions {
  kafka: Kafka;
  /** The catalog topic (`kafka.topics.destinations`, one partition). */
  topic: string;
  /** Decrypts the records' secrets: every reader holds the same ring, so every reader skips the same records. */
  keyring: Keyring;
  logger: Logger;
  /** How the start waits out Kafka's "not yet" answers: the service's start-up retry (`StartupRetry#run`). */
  retry: RetryKafka;
  /** Prefix of the reader's throwaway consumer group; default `sluice.destinations`. */
  groupPrefix?: string;
}

/** The catalog as one process reads it, kept current (docs/reference/runtime-destinations.md, "Reading"). */
export interface CatalogReader
  extends Pick<
    CatalogFollower,
    | 'appliedOffset'
    | 'current'
    | 'versionOf'
    | 'deletionOf'
    | 'deletedIn'
    | 'staleKeys'
    | 'onChange'
    | 'waitForOffset'
    | 'track'
  > {
  /**
   * Resolves once every record the topic held when the reader started is applied; rejects with
   * `CatalogKeyringError` if a record then in force cannot be decrypted with the keyring.
   */
  ready: Promise<void>;
  /** Joined and reading (false while its consumer waits to run again after a Kafka error), for `/readyz`. */
  readonly connected: boolean;
  close(): Promise<void>;
}

/**
 * Reads the catalog topic from its start and keeps reading it, folding every record into a
 * `CatalogFollower`. Its consumer group is its own (a random id) and never commits: every start
 * reads the whole compacted topic. After a Kafka error the consumer runs again from the start and
 * passes over the offsets it already read. The end offset it must reach before `ready` is asked
 * through `retry`, so a broker still placing the topic delays the start, never ends it.
 */
export async function startCatalogReader(options: CatalogReaderOptions): Promise<CatalogReader> {
  const { kafka, topic, logger, retry } = options;
  const follower = new CatalogFollower({
    keyring: options.keyring,
    onUnreadable: (err, offset) =>
      logger.warn({ topic, offset, key: err.key, why: err.message }, 'catalog record skipped'),
  });
  const admin = kafka.admin();
  let end: number;
  try {
    await retry('connect the catalog reader', () => admin.connect());
    const offsets = await retry(`list offsets of ${topic}`, () => admin.fetchTopicOffsets(topic));
    end = Math.max(0, ...offsets.map((p) => Number(p.high)));
  } finally {
    await admin.disconnect();
  }
  let settleReady!: (error?: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    settleReady = (error) => (error === undefined ? resolve() : reject(error));
  });
  // Handled where it is awaited; until then its refusal is not an unhandled rejection.
  ready.catch(() => undefined);
  // Caught up: ready, unless a record in force does not decrypt (keys other than those that wrote it).
  const caughtUp = () => {
    if (follower.appliedOffset < end) return;
    const undecryptable = follower.undecryptable;
    settleReady(undecryptable.length === 0 ? undefined : new CatalogKeyringError(undecryptable));
  };
  caughtUp();

  const group = await readWholeTopic(kafka, {
    topic,
    groupPrefix: options.groupPrefix ?? 'sluice.destinations',
    logger,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      for (const m of batch.messages) {
        follower.read({ key: m.key, value: m.value, offset: Number(m.offset) });
        resolveOffset(m.offset);
      }
      // A batch that reaches the high watermark read all there is, whatever compaction removed.
      const last = Number(batch.lastOffset());
      if (batch.messages.length > 0 && last >= Number(batch.highWatermark) - 1)
        follower.advanceTo(Number(batch.highWatermark));
      caughtUp();
      await heartbeat();
    },
  });
  return {
    ready,
    get connected() {
      return group.connected;
    },
    get appliedOffset() {
      return follower.appliedOffset;
    },
    current: () => follower.current(),
    versionOf: (id: string) => follower.versionOf(id),
    deletionOf: follower.deletionOf.bind(follower),
    deletedIn: follower.deletedIn.bind(follower),
    staleKeys: (id: string) => follower.staleKeys(id),
    onChange: follower.onChange.bind(follower),
    waitForOffset: follower.waitForOffset.bind(follower),
    track: follower.track.bind(follower),
    close: () => group.disconnect(),
  };
}
