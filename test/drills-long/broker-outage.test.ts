// Long drill: stop the broker for 30 s under ingest load → ingest answers 503, then every event
// that got 2xx is delivered, and no service exits or stays unready. Twice: with a healthy endpoint
// (the deliverer in the middle of deliveries), and with an endpoint that fails until after the
// outage (the retry service in the middle of forwarding). The outage outlasts kafkajs's own retries
// (~16 s), so its consumers crash during it; a service that treated that as fatal would exit here.
// Each time a destination sent one webhook per event and one beside it sent batches
// (docs/reference/batches.md). DRILL_CPU_HOG=1 runs a busy process beside the pipeline (one of
// the two cores taken).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, it, type TestContext } from 'node:test';
import { startLocalKafka } from '@sluice/local-kafka';
import { sleep } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline, type PipelineOptions } from '../support/pipeline.ts';

const OUTAGE_MS = Number(process.env.DRILL_OUTAGE_MS ?? 30_000);
const CPU_HOG = process.env.DRILL_CPU_HOG === '1';

// Whatever a drill started is stopped here too, should the drill itself have been cut off.
const cleanups = new Set<() => Promise<unknown>>();
after(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
});
function owned(cleanup: () => Promise<unknown>): () => Promise<void> {
  cleanups.add(cleanup);
  return async () => {
    cleanups.delete(cleanup);
    await cleanup();
  };
}

function startCpuHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

async function outageDrill(
  t: TestContext,
  name: string,
  options: Omit<PipelineOptions, 'brokers'>,
  afterRestart: () => void = () => {},
) {
  const hog = CPU_HOG ? startCpuHog() : undefined;
  const stopHog = owned(async () => hog?.kill('SIGKILL'));
  const broker = await startLocalKafka();
  const disposeBroker = owned(() => broker.dispose());
  let pipeline: Pipeline | undefined;
  let closePipeline = async () => {};
  let stop = false;
  let load: Promise<void> = Promise.resolve();
  try {
    pipeline = await Pipeline.start({
      ...options,
      brokers: broker.brokers,
      partitions: 3,
      batchedBeside: { maxEvents: 100, maxWait: '50ms' },
    });
    const started = pipeline;
    closePipeline = owned(() => started.close());
    const statuses = new Map<string, number>();
    load = (async () => {
      while (!stop) {
        const r = await started.send(200, { batchSize: 20, concurrency: 4 });
        const key = r.failed > 0 ? 'failed' : 'ok';
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        await sleep(100);
      }
    })();
    await sleep(3_000);
    const down = Date.now();
    await broker.stop();
    await sleep(OUTAGE_MS);
    await broker.restart();
    afterRestart();
    pipeline.ledger.disruption('broker outage', down, Date.now());
    await sleep(10_000);
    stop = true;
    await load;
    await pipeline.settle(120_000);
    const summary = pipeline.ledger.summary(30_000);
    t.diagnostic(
      `cpu hog: ${CPU_HOG}; rounds ok=${statuses.get('ok') ?? 0} with failures=${statuses.get('failed') ?? 0}`,
    );
    t.diagnostic(formatSummary(name, summary));
    console.log(formatSummary(name, summary));
    // A service that exited explains everything after it: name it before counting what is missing.
    assert.deepEqual(pipeline.unexpectedExits(), [], 'no service exited');
    for (const svc of pipeline.services.values()) {
      const ready = await fetch(`${svc.url}/readyz`);
      assert.equal(ready.status, 200, `${svc.name} is ready again`);
    }
    assert.ok((statuses.get('failed') ?? 0) > 0, 'ingest refused requests during the outage');
    assert.equal(summary.lost, 0);
    assert.equal(summary.badSignatures, 0);
    assert.equal(summary.badBodies, 0);
  } finally {
    stop = true;
    await load.catch(() => undefined);
    await closePipeline();
    await disposeBroker();
    await stopHog();
  }
}

it(`broker down for ${OUTAGE_MS / 1000} s under load: 503s during, every 2xx delivered after`, (t) =>
  outageDrill(t, 'broker-outage', {
    endpoints: [() => ({ status: 200 })],
    services: ['ingest', 'deliverer', 'retry', 'audience-sync'],
  }));

it(`broker down for ${OUTAGE_MS / 1000} s while events wait in the retry tiers: all delivered once the endpoint recovers`, (t) => {
  let healthyFrom = Number.POSITIVE_INFINITY;
  return outageDrill(
    t,
    'broker-outage-retries',
    {
      endpoints: [() => ({ status: Date.now() >= healthyFrom ? 200 : 503 })],
      services: ['ingest', 'deliverer', 'retry', 'audience-sync'],
      config: { retry: { window: '10m', schedule: ['1s', '2s'], tiers: ['1s', '2s'] } },
    },
    () => (healthyFrom = Date.now() + 5_000),
  );
});
