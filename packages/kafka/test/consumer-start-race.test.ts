// A consumer stopped while it starts, or while it waits to run again after a crash: it never throws
// and never leaves a member of its group running behind. kafkajs disconnected while its `run` is
// still joining can go on consuming (tulios/kafkajs#1639); its `pause` throws while it is not
// running. The kafkajs consumer here is a stand-in whose join the test lets finish, so the order of
// the calls can be checked exactly; the same parts run against the real broker in the integration tier.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConcurrentConsumer, createGroupConsumer, GrowingConsumer, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';

const logger = createLogger({ name: 'start-race-test', level: 'silent' });

/** One kafkajs consumer as the parts under test use it: its calls in order, its join held until `join()`. */
interface StandIn {
  calls: string[];
  topics: string[];
  join: () => void;
}

/** A `Kafka` whose consumers are stand-ins, each recorded in `made`. */
function standInKafka(): { kafka: Kafka; made: StandIn[] } {
  const made: StandIn[] = [];
  const kafka = {
    consumer: () => {
      let join!: () => void;
      const joined = new Promise<void>((resolve) => (join = resolve));
      let running = false;
      const me: StandIn = { calls: [], topics: [], join };
      made.push(me);
      return {
        events: {
          CRASH: 'crash',
          GROUP_JOIN: 'join',
          DISCONNECT: 'disconnect',
          STOP: 'stop',
          COMMIT_OFFSETS: 'commit',
        },
        on: () => () => undefined,
        connect: async () => void me.calls.push('connect'),
        subscribe: async ({ topics }: { topics: string[] }) => {
          me.topics = topics;
          me.calls.push('subscribe');
        },
        run: async () => {
          me.calls.push('run');
          running = true;
          await joined;
          me.calls.push('joined');
        },
        pause: () => {
          if (!running) throw new Error('Consumer group was not initialized, consumer#run must be called first');
          me.calls.push('pause');
        },
        resume: () => undefined,
        commitOffsets: async () => undefined,
        disconnect: async () => {
          running = false;
          me.calls.push('disconnect');
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, made };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('a consumer stopped while it starts', () => {
  it('disconnect waits for a start under way to finish joining, then disconnects', async () => {
    const { kafka, made } = standInKafka();
    const group = createGroupConsumer(kafka, { groupId: 'g', logger });
    const running = group.run({ topics: ['t'], fromBeginning: true }, {});
    await tick();
    const closing = group.disconnect();
    await tick();
    assert.deepEqual(made[0]!.calls, ['connect', 'subscribe', 'run'], 'not disconnected mid-join');
    made[0]!.join();
    await Promise.all([running, closing]);
    assert.deepEqual(made[0]!.calls, ['connect', 'subscribe', 'run', 'joined', 'disconnect']);
  });

  it('stopIntake before the consumer runs does not throw; it is paused once running', async () => {
    const { kafka, made } = standInKafka();
    const consumer = new ConcurrentConsumer({
      kafka,
      groupId: 'g',
      logger,
      topics: ['t'],
      maxInFlightPerPartition: 4,
      handle: async () => undefined,
    });
    assert.doesNotThrow(() => consumer.stopIntake());
    assert.equal(await consumer.drain(0), true);
    assert.deepEqual(made[0]!.calls, []);
  });

  it('a topic added while the first generation joins is taken in after that join, never by stopping it mid-join', async () => {
    const { kafka, made } = standInKafka();
    const growing = new GrowingConsumer({
      kafka,
      groupId: 'g',
      logger,
      topics: ['a'],
      maxInFlightPerPartition: 4,
      handle: async () => undefined,
      swapDrainMs: 0,
    });
    const started = growing.start();
    await tick();
    growing.add('b');
    await tick();
    assert.equal(made.length, 1, 'no second generation while the first joins');
    assert.deepEqual(made[0]!.calls, ['connect', 'subscribe', 'run']);
    made[0]!.join();
    await started;
    for (let i = 0; i < 50 && made.length < 2; i++) await tick();
    assert.equal(made.length, 2, 'the second generation started');
    assert.deepEqual(made[0]!.calls, ['connect', 'subscribe', 'run', 'joined', 'pause', 'disconnect']);
    assert.deepEqual(made[1]!.topics, ['a', 'b']);
    made[1]!.join();
    await growing.close();
    assert.deepEqual(made[1]!.calls, ['connect', 'subscribe', 'run', 'joined', 'disconnect']);
  });
});
