// The service lifecycle without a broker: parts are plain objects that record what happens to them.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it, mock } from 'node:test';
import { ConfigStore, readEnv } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry, defineService, Lifecycle, type Part, type ServiceConsumer } from '@sluice/service-kit';
import { testConfig } from '@sluice/testkit';

function recordingLogger() {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  return { lines, logger: createLogger({ name: 'lifecycle-test', level: 'info', destination: sink }) };
}

/** A part that writes `start <name>`, `intake <name>` and `stop <name>` to `events`. */
function part(events: string[], name: string, failStop = false): Part & { start(): void } {
  return {
    name,
    start: () => void events.push(`start ${name}`),
    stopIntake: () => void events.push(`intake ${name}`),
    stop: () => {
      events.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} would not stop`);
    },
  };
}

const NAMES = ['admin', 'producer', 'thread', 'consumers', 'http'];

describe('Lifecycle', () => {
  it('starts parts in order and shuts down newest first, every intake stopped before any part stops', async () => {
    const events: string[] = [];
    const life = new Lifecycle(recordingLogger().logger);
    for (const name of NAMES) {
      const p = part(events, name);
      await life.start(p, () => p.start());
    }
    await life.stop();
    assert.deepEqual(events, [
      ...NAMES.map((n) => `start ${n}`),
      ...NAMES.toReversed().map((n) => `intake ${n}`),
      ...NAMES.toReversed().map((n) => `stop ${n}`),
    ]);
  });

  for (const [failing, failingName] of NAMES.entries()) {
    it(`a start that fails at ${failingName} ends what was started, newest first, the failing part too`, async () => {
      const events: string[] = [];
      const life = new Lifecycle(recordingLogger().logger);
      const start = async () => {
        for (const name of NAMES) {
          const p = part(events, name);
          await life.start(p, () => {
            p.start();
            if (name === failingName) throw new Error(`${name} failed half-way`);
          });
        }
      };
      await assert.rejects(start(), new RegExp(`${failingName} failed half-way`));
      await life.stop();
      const started = NAMES.slice(0, failing + 1);
      assert.deepEqual(events, [
        ...started.map((n) => `start ${n}`),
        ...started.toReversed().map((n) => `intake ${n}`),
        ...started.toReversed().map((n) => `stop ${n}`),
      ]);
    });
  }

  it('a part built by its own factory is added only once it exists', async () => {
    const events: string[] = [];
    const life = new Lifecycle(recordingLogger().logger);
    await life.open(
      'thread',
      async () => 'the thread',
      (thread) => ({ stop: () => void events.push(`stop ${thread}`) }),
    );
    await assert.rejects(
      life.open(
        'second thread',
        async () => {
          throw new Error('could not start');
        },
        () => ({ stop: () => void events.push('stop second thread') }),
      ),
      /could not start/,
    );
    await life.stop();
    assert.deepEqual(events, ['stop the thread']);
  });

  it('a stop (or intake stop) that fails is logged and the other parts still stop', async () => {
    const events: string[] = [];
    const { lines, logger } = recordingLogger();
    const life = new Lifecycle(logger);
    for (const name of NAMES) life.add(part(events, name, name === 'consumers' || name === 'http'));
    life.add({
      name: 'bad intake',
      stopIntake: () => {
        throw new Error('no intake here');
      },
    });
    await life.stop();
    assert.deepEqual(
      events.filter((e) => e.startsWith('stop')),
      NAMES.toReversed().map((n) => `stop ${n}`),
    );
    assert.equal(events.filter((e) => e.startsWith('intake')).length, NAMES.length);
    const warnings = lines.filter((l) => l.includes('"level":40'));
    assert.equal(warnings.length, 3, lines.join(''));
    assert.match(warnings[0]!, /bad intake: stopping its intake failed/);
    assert.match(warnings[1]!, /http: stop failed/);
    assert.match(warnings[2]!, /consumers: stop failed/);
  });

  it('stops once; nothing can be added after a stop began', async () => {
    let stops = 0;
    const life = new Lifecycle(recordingLogger().logger);
    life.add({ name: 'once', stop: async () => void stops++ });
    const first = life.stop();
    assert.equal(life.stop(), first);
    await first;
    assert.equal(stops, 1);
    assert.throws(() => life.add({ name: 'late' }), /cannot start late: the service is stopping/);
  });

  it('readiness: a check name several parts share passes only when all of theirs pass; fatal is the first part to fail', async () => {
    const life = new Lifecycle(recordingLogger().logger);
    let producerUp = true;
    let fail!: (err: Error) => void;
    life.add({ name: 'admin', ready: { kafka: () => true } });
    life.add({ name: 'producer', ready: { kafka: () => producerUp }, fatal: new Promise((r) => (fail = r)) });
    life.add({ name: 'database', ready: { database: async () => true } });
    life.add({ name: 'consumers', fatal: new Promise(() => {}) });
    const checks = life.readiness();
    assert.deepEqual(Object.keys(checks), ['kafka', 'database']);
    assert.equal(await checks.kafka!(), true);
    producerUp = false;
    assert.equal(await checks.kafka!(), false);
    assert.equal(await checks.database!(), true);
    const fatal = life.fatal();
    fail(new Error('thread died'));
    assert.match((await fatal).message, /thread died/);
  });
});

function context() {
  return {
    name: 'lifecycle-test',
    env: readEnv({}),
    brokers: [],
    config: new ConfigStore(undefined, testConfig()),
    logger: recordingLogger().logger,
    registry: createMetricsRegistry('lifecycle-test'),
  };
}

/** A consumer that records its calls; `failStart` makes its start throw. */
function consumer(events: string[], name: string, failStart = false): ServiceConsumer {
  return {
    connected: true,
    fatal: new Promise(() => {}),
    start: async () => {
      events.push(`start ${name}`);
      if (failStart) throw new Error(`${name} could not join`);
    },
    stopIntake: () => void events.push(`intake ${name}`),
    drain: async () => (events.push(`drain ${name}`), true),
    close: async () => void events.push(`close ${name}`),
  };
}

describe('defineService', () => {
  it('returns what the build returns with close and fatal; close ends the config watch first, then the rest newest first', async () => {
    const ctx = context();
    const watch = mock.method(ctx.config, 'watch');
    const unwatch = mock.method(ctx.config, 'close');
    const events: string[] = [];
    const service = await defineService(ctx, async (life) => {
      life.add({ name: 'admin', stop: () => void events.push('stop admin') });
      await life.consumers([consumer(events, 'a'), consumer(events, 'b')]);
      return { port: 1234 };
    }).start();
    assert.equal(service.port, 1234);
    assert.equal(watch.mock.callCount(), 1);
    await service.close();
    assert.equal(unwatch.mock.callCount(), 1);
    assert.deepEqual(events, [
      'start a',
      'start b',
      'intake a',
      'intake b',
      'drain a',
      'drain b',
      'close a',
      'close b',
      'stop admin',
    ]);
  });

  it('a consumer whose start failed is not asked to stop its intake, but every consumer is closed, and the start rejects', async () => {
    const ctx = context();
    const watch = mock.method(ctx.config, 'watch');
    const events: string[] = [];
    await assert.rejects(
      defineService(ctx, async (life) => {
        life.add({ name: 'producer thread', stop: () => void events.push('stop producer thread') });
        await life.consumers([consumer(events, 'a'), consumer(events, 'b', true)]);
        events.push('never reached');
        return {};
      }).start(),
      /b could not join/,
    );
    assert.equal(watch.mock.callCount(), 0);
    assert.deepEqual(events, [
      'start a',
      'start b',
      'intake a',
      'drain a',
      'drain b',
      'close a',
      'close b',
      'stop producer thread',
    ]);
  });
});
