/** Bytes of a response body kept in the attempt record (docs/reference/delivery.md: "first 1 KB", KB = 1,000 bytes). */
export const RESPONSE_SNIPPET_BYTES = 1_000;
/** Origin name written on records this service sends to `sluice.rejected`. */
export const REJECT_ORIGIN = 'deliverer';
/** How long attempt/retry/dead-letter records are gathered before one `sendBatch` when the deliverer was idle. */
export const PRODUCE_LINGER_MS = 2;
/**
 * Under load, the least time between two `sendBatch`es of side records: at 30,000 records/s they
 * leave ~300 to a request instead of ~20 (kafkajs spends ~3× less CPU per record), and a record
 * waits at most this long more for its acknowledgement.
 */
export const PRODUCE_INTERVAL_MS = 10;
/** Operator events waiting to be sent at most; past it the oldest is dropped (docs/reference/operator-events.md). */
export const OPERATOR_QUEUE_MAX = 1_000;
/** Waits before each retry of an operator event: seven tries over about a minute. */
export const OPERATOR_BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000] as const;
/** How often the signing secrets are checked for a `notAfter` coming up. */
export const SECRET_CHECK_INTERVAL_MS = 15 * 60_000;
/** Who auto-disable acts as, in the state and action records. */
export const AUTO_ACTOR = 'sluice';
/** The operator-event consumer's group: `<clientId>.deliverer.operator-events`, one replica sends each action's event. */
export const OPERATOR_GROUP_SUFFIX = 'operator-events';

/** The header of a waiting record (docs/reference/ordering.md): the round it was written in and its place in the queue. */
export const ORDERING_HEADER = 'sluice-ordering';
/** Header of a `sluice.ordering` record: the process that wrote it (its reader skips its own echoes). */
export const ORDERING_WRITER_HEADER = 'sluice-writer';

/** Longest a waiting record that went round once with no progress waits in its slot before going round again. */
export const ORDERING_IDLE_WAIT_MS = 30_000;
/**
 * How far from the front of a moving queue (nothing held but attempts in flight) a record waiting
 * in its handler slot (memory being spent) is woken to wait in memory instead; those further back
 * stay in their slots while the front is in hand, so a released queue leaves at the pace of the
 * receiver, each record read once.
 */
export const ORDERING_IDLE_AHEAD = 16;
/**
 * The most events of one user that wait in memory behind its attempt in flight for one ordered
 * destination, their handler slots given back. A later one sends them all, and itself, to the
 * waiting topic in order.
 */
export const ORDERING_HELD_EVENTS = 32;
/**
 * The most body bytes of the events waiting in memory behind their users' attempts in flight,
 * across the ordered destinations and users of a replica (16 MiB); past it, as `ORDERING_HELD_EVENTS`.
 */
export const ORDERING_HELD_BYTES = 16 * 1024 * 1024;
/**
 * One user's waiting records wait in memory for their turn with at most this share (1/n) of
 * `ORDERING_HELD_BYTES` per destination, so one held user never takes the memory the others' turns need.
 */
export const ORDERING_USER_SHARE_OF_HELD = 4;
/**
 * The most events of one user that wait behind its head for one ordered destination; a later one is
 * dead-lettered (`permanent_failure`, replayable) instead, so one user cannot fill the waiting topic.
 */
export const ORDERING_MAX_WAITING = 10_000;
/** The most body bytes of one user's events waiting for one ordered destination (32 MiB); past it, as `ORDERING_MAX_WAITING`. */
export const ORDERING_MAX_WAITING_BYTES = 32 * 1024 * 1024;
/** At most one warning per destination this often when events are not held in order (memory budget spent). */
export const ORDERING_UNORDERED_LOG_INTERVAL_MS = 60_000;

/**
 * How long the events group finishes the records in hand when a waiting topic created at a first
 * wait joins its topics (docs/reference/ordering.md, "Topics"): the attempts in flight and the
 * events waiting in memory behind them end within it; records waiting longer (for their user's
 * turn) are read again by the group's next generation.
 */
export const EVENTS_SWAP_DRAIN_MS = 10_000;
