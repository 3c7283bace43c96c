// Drill 3 (issue 10, long): stop the broker for 30 s under ingest load → ingest answers 503, then
// every event that got 2xx is delivered, and no process is left wedged or gone. Twice: with a
// healthy endpoint (deliverer in the middle of deliveries), and with an endpoint that fails until
// after the outage (retry service in the middle of forwarding). The outage outlasts kafkajs's own
// retries (~16 s), so a service that treated a failed write as fatal would exit here.
import assert from 'node:assert/strict';
import { after, it, type TestContext } from 'node:test';
import { startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { sleep } from '@sluice/testkit';
import { formatSummary } from '../support/ledger.ts';
import { Pipeline, type PipelineOptions } from '../support/pipeline.ts';

const OUTAGE_MS = Number(process.env.DRILL_OUTAGE_MS ?? 30_000);
let broker: LocalKafka | undefined;
let pipeline: Pipeline | undefined;
after(async () => {
  await pipeline?.close();
  await broker?.dispose();
});

async function outageDrill(
  t: TestContext,
  name: string,
  options: Omit<PipelineOptions, 'brokers'>,
  afterRestart: () => void = () => {},
) {
  broker = await startLocalKafka();
  pipeline = await Pipeline.start({ ...options, brokers: broker.brokers, partitions: 3 });
  let stop = false;
  const statuses = new Map<string, number>();
  const load = (async () => {
    while (!stop) {
      const r = await pipeline!.send(200, { batchSize: 20, concurrency: 4 });
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
  t.diagnostic(`rounds ok=${statuses.get('ok') ?? 0} with failures=${statuses.get('failed') ?? 0}`);
  t.diagnostic(formatSummary(name, summary));
  console.log(formatSummary(name, summary));
  assert.ok((statuses.get('failed') ?? 0) > 0, 'ingest refused requests during the outage');
  assert.equal(summary.lost, 0);
  for (const svc of pipeline.services.values()) {
    assert.deepEqual(svc.exits, [], `${svc.name} kept running`);
    const ready = await fetch(`${svc.url}/readyz`);
    assert.equal(ready.status, 200, `${svc.name} is not wedged`);
  }
  await pipeline.close();
  await broker.dispose();
  pipeline = undefined;
  broker = undefined;
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
      config: { retry: { window: '10m', schedule: ['1s', '2s'], tiers: ['1s', '2s'] } },
    },
    () => (healthyFrom = Date.now() + 5_000),
  );
});
