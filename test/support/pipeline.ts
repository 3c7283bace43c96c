import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { Agent, request } from 'undici';
import { RETRY_HEADERS } from '@sluice/envelope';
import type { KafkaSecurity } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { type Behaviour, prefixedTopics, readTopic, type Receiver, startReceiver, uniqueName } from '@sluice/testkit';
import { testKafka } from '@sluice/testkit';
import { type DestinationAccount, formatSummary, Ledger, type LedgerSummary, ledgerProperties } from './ledger.ts';
import { ServiceProcess, writeConfigFile, type ServiceName } from './service-process.ts';

export const SECRET = 'ledger-secret';
/** The id of the batched destination `batchedBeside` adds. */
export const BATCHED_DESTINATION = 'ledger-batched';
export const WRITE_KEY = 'ledger-write-key';
/** Bearer token of the delivery-log API in every pipeline. */
export const DELIVERY_LOG_TOKEN = 'ledger-delivery-log-token-of-32-characters-or-more';

/**
 * The options that turn runtime destinations on in a pipeline: one keyring key `k1`, random, given
 * to every service in the environment variable `variable`.
 */
export function runtimeKeyring(variable: string): Pick<PipelineOptions, 'env' | 'config'> {
  return {
    env: { [variable]: randomBytes(32).toString('hex') },
    config: { runtimeDestinations: { keyring: [{ id: 'k1', key: { env: variable } }] } },
  };
}

export interface PipelineOptions {
  /** One behaviour per endpoint (1–5 endpoints). */
  endpoints: Behaviour[];
  /** Settings every endpoint of the destination gets besides its URL (e.g. `maxRequestsPerSecond`). */
  endpointSettings?: Record<string, unknown>;
  /** Config-file overrides (retry, delivery, kafka…), merged over the defaults below. */
  config?: Record<string, unknown>;
  services?: ServiceName[];
  partitions?: number;
  /** Broker list; default `KAFKA_BROKERS` (drills that stop a broker bring their own). */
  brokers?: string;
  /** Extra environment of the service processes (e.g. the variable a `{ env: NAME }` secret names). */
  env?: Record<string, string>;
  /** TLS/SASL of the pipeline's own reader (the services take theirs from `config.kafka`). */
  security?: KafkaSecurity;
  /**
   * A second destination beside the first, delivering in batches (its `batch` settings,
   * docs/reference/batches.md) to one receiver that behaves as the first endpoint; the ledger
   * then counts every event once per destination.
   */
  batchedBeside?: Record<string, unknown>;
  /**
   * Destinations beside the first (one or several), each with its own receiver answering as
   * `endpoint` and `destination`'s keys (e.g. `ordering`); the ledger then counts every event once
   * per destination.
   */
  beside?: BesideDestination | BesideDestination[];
  /** The first destination's `filter` (docs/reference/filters.md); absent = every event. */
  filter?: Record<string, unknown>;
  /** More keys of the first destination (e.g. `ordering`). */
  destination?: Record<string, unknown>;
}

/** A destination `beside` adds: its id, what its receiver answers, and its keys besides its one endpoint. */
export interface BesideDestination {
  id: string;
  endpoint: Behaviour;
  destination?: Record<string, unknown>;
}

/** A destination of the pipeline's config with one endpoint, its receiver and what that receiver answers. */
interface SideDestination {
  id: string;
  endpoint: Behaviour;
  destination: Record<string, unknown>;
}

/**
 * The whole pipeline as production runs it: each service its own process, real Kafka, real
 * receivers, every webhook logged in a ledger.
 */
export class Pipeline {
  readonly ledger = new Ledger(SECRET);
  readonly receivers: Receiver[] = [];
  readonly services = new Map<ServiceName, ServiceProcess>();
  /** More processes of a service beside the one in `services` (`startReplica`), in the order started. */
  readonly replicas: ServiceProcess[] = [];
  readonly topics: Record<string, string>;
  readonly configPath: string;
  private readonly dir = mkdtempSync(join(tmpdir(), 'sluice-pipeline-'));
  private readonly agent = new Agent({ connections: 64 });
  private runId = uniqueName('run');
  private seq = 0;

  readonly brokers: string;

  readonly raw: Record<string, unknown>;
  private readonly options: PipelineOptions;
  private constructor(options: PipelineOptions, raw: Record<string, unknown>) {
    this.options = options;
    this.raw = raw;
    this.brokers = options.brokers ?? process.env.KAFKA_BROKERS!;
    this.configPath = join(this.dir, 'sluice.yaml');
    this.topics = (raw.kafka as { topics: Record<string, string> }).topics;
  }

  static async start(options: PipelineOptions): Promise<Pipeline> {
    const prefix = uniqueName('pipe');
    const receivers = await Promise.all(options.endpoints.map(() => startReceiver()));
    const sides: SideDestination[] = [
      ...(options.batchedBeside
        ? [{ id: BATCHED_DESTINATION, endpoint: options.endpoints[0]!, destination: { batch: options.batchedBeside } }]
        : []),
      ...[options.beside ?? []].flat().map((side) => ({ destination: {}, ...side })),
    ];
    const sideReceivers = await Promise.all(sides.map(() => startReceiver()));
    const topics: Record<string, string> = prefixedTopics(prefix);
    const extra = options.config ?? {};
    const raw: Record<string, unknown> = {
      ...extra,
      sources: [{ id: 'ledger', writeKeys: [WRITE_KEY] }],
      destinations: [
        {
          id: 'ledger-hooks',
          type: 'webhooks',
          sourceIds: ['ledger'],
          settings: {
            webhooks: receivers.map((r) => ({ ...options.endpointSettings, url: r.url })),
            sharedSecret: SECRET,
          },
          ...(options.filter && { filter: options.filter }),
          ...options.destination,
        },
        ...sides.map((side, i) => ({
          id: side.id,
          type: 'webhooks',
          sourceIds: ['ledger'],
          settings: { webhooks: [{ url: sideReceivers[i]!.url }], sharedSecret: SECRET },
          ...side.destination,
        })),
      ],
      kafka: {
        ...((extra.kafka as object) ?? {}),
        clientId: prefix,
        partitions: options.partitions ?? 4,
        replicationFactor: 1,
        topics,
      },
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, ...((extra.delivery as object) ?? {}) },
      deliveryLog: { adminToken: DELIVERY_LOG_TOKEN, ...((extra.deliveryLog as object) ?? {}) },
    };
    const pipeline = new Pipeline(options, raw);
    pipeline.receivers.push(...receivers);
    receivers.forEach((r, i) => r.behave(pipeline.ledger.recording(r.url, options.endpoints[i])));
    sides.forEach((side, i) => {
      const receiver = sideReceivers[i]!;
      pipeline.receivers.push(receiver);
      receiver.behave(pipeline.ledger.recording(receiver.url, side.endpoint, side.id));
    });
    writeConfigFile(pipeline.configPath, raw);
    for (const name of options.services ?? ['ingest', 'deliverer', 'retry'])
      pipeline.services.set(name, pipeline.#process(name));
    // Sequential starts: they race to create topics otherwise (harmless, but slower on 2 cores).
    try {
      for (const svc of pipeline.services.values()) await svc.start();
    } catch (err) {
      // The caller never gets the pipeline: what started is stopped here, or it keeps the test running.
      await pipeline.close().catch(() => undefined);
      throw err;
    }
    return pipeline;
  }

  /** A process of `name` with the pipeline's config and environment (not started). */
  #process(name: ServiceName): ServiceProcess {
    return new ServiceProcess(name, {
      ...this.options.env,
      SLUICE_CONFIG: this.configPath,
      KAFKA_BROKERS: this.brokers,
    });
  }

  /**
   * Starts one more process of `name` (a second deliverer in the same consumer group, as a scaled-out
   * deployment runs it) and waits until it is ready; `close` stops it with the others.
   */
  async startReplica(name: ServiceName): Promise<ServiceProcess> {
    const svc = this.#process(name);
    this.replicas.push(svc);
    return svc.start();
  }

  /** Every process of the pipeline: one per service, then the replicas. */
  processes(): ServiceProcess[] {
    return [...this.services.values(), ...this.replicas];
  }

  service(name: ServiceName): ServiceProcess {
    const svc = this.services.get(name);
    if (!svc) throw new Error(`${name} is not part of this pipeline`);
    return svc;
  }

  /**
   * Posts `count` ledger events through ingest's /v1/batch; records what was acknowledged (unless
   * `record: false`: events the ledger does not expect everywhere, e.g. routed to one destination by
   * `call.integrations`). `call` is merged into every call. Resolves with the acknowledged ids too.
   */
  async send(
    count: number,
    options: { batchSize?: number; concurrency?: number; call?: Record<string, unknown>; record?: boolean } = {},
  ): Promise<{ acked: number; failed: number; ids: string[] }> {
    const batchSize = options.batchSize ?? 50;
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < count; i += batchSize) {
      batches.push(
        Array.from({ length: Math.min(batchSize, count - i) }, () => {
          const seq = this.seq++;
          return {
            ...options.call,
            type: 'track',
            messageId: `${this.runId}-${seq}`,
            userId: `user-${seq % 97}`,
            event: 'Ledger Event',
            properties: ledgerProperties(seq),
          };
        }),
      );
    }
    return this.postCalls(batches, options);
  }

  /** A message id of this run, unique in the ledger (for calls built by the caller, `postCalls`). */
  nextMessageId(): string {
    return `${this.runId}-${this.seq++}`;
  }

  /**
   * Posts calls the caller built (each with its `messageId`) through ingest's /v1/batch, one request
   * per batch, `concurrency` requests at a time; records them in the ledger as `send` does. Resolves
   * with the acknowledged ids and when ingest acknowledged each.
   */
  async postCalls(
    batches: Record<string, unknown>[][],
    options: { concurrency?: number; record?: boolean } = {},
  ): Promise<{ acked: number; failed: number; ids: string[]; ackedAt: Map<string, number> }> {
    const record = options.record ?? true;
    const ackedIds: string[] = [];
    const ackedAt = new Map<string, number>();
    let acked = 0;
    let failed = 0;
    let next = 0;
    const ingest = this.service('ingest');
    const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`;
    const worker = async () => {
      while (next < batches.length) {
        const calls = batches[next++]!;
        const ids = calls.map((call) => String(call.messageId));
        if (record) ids.forEach((id) => this.ledger.sent.add(id));
        const body = JSON.stringify({ batch: calls, sentAt: new Date().toISOString() });
        try {
          const res = await request(`${ingest.url}/v1/batch`, {
            method: 'POST',
            dispatcher: this.agent,
            headers: { 'content-type': 'application/json', authorization: auth },
            body,
          });
          const text = await res.body.text();
          if (res.statusCode === 200 && (JSON.parse(text) as { accepted?: number }).accepted === ids.length) {
            const at = Date.now();
            ids.forEach((id) => ackedAt.set(id, at));
            if (record) ids.forEach((id) => this.ledger.acked.add(id));
            ackedIds.push(...ids);
            acked += ids.length;
          } else failed += ids.length;
        } catch {
          failed += ids.length;
        }
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
    return { acked, failed, ids: ackedIds, ackedAt };
  }

  /** Posts raw calls to ingest's /v1/batch (no ledger); returns the HTTP status and the answer. */
  async postBatch(
    calls: Record<string, unknown>[],
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const auth = `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`;
    const res = await request(`${this.service('ingest').url}/v1/batch`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { 'content-type': 'application/json', authorization: auth, ...headers },
      body: JSON.stringify({ batch: calls }),
    });
    return { status: res.statusCode, body: await res.body.json() };
  }

  /**
   * Calls the delivery-log API (`delivery-log` must be among the services) with the pipeline's token
   * and `headers` (e.g. `if-match`); resolves with the answer's headers too (e.g. `etag`).
   */
  async deliveryLog(
    path: string,
    init: {
      method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
      body?: unknown;
      headers?: Record<string, string>;
    } = {},
  ): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
    const res = await request(`${this.service('delivery-log').url}${path}`, {
      method: init.method ?? 'GET',
      dispatcher: this.agent,
      headers: {
        authorization: `Bearer ${DELIVERY_LOG_TOKEN}`,
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    return { status: res.statusCode, body: await res.body.json(), headers: res.headers };
  }

  /**
   * The delivery log's ledger (docs/delivery-log.md, "Ledger") of the events received from `from`
   * (epoch ms) until now, per destination, in the shape of `Ledger.accounts`.
   */
  async deliveryLogAccounts(from: number): Promise<Map<string, DestinationAccount>> {
    const accounts = new Map<string, DestinationAccount>();
    await this.#addLedger(accounts, from, Date.now() + 60_000);
    return accounts;
  }

  /**
   * Adds the delivery log's totals of deliveries received in `from`–`to` to `accounts`. A range the
   * ledger refuses as too wide (the embedded database reads at most 100,000 deliveries per request,
   * docs/reference) is asked for in two halves, as an operator auditing a large run would.
   */
  async #addLedger(accounts: Map<string, DestinationAccount>, from: number, to: number): Promise<void> {
    const { status, body } = await this.deliveryLog(`/api/v1/ledger?from=${from}&to=${to}&bucket=24h`);
    if (status === 400 && /take a shorter range/.test(JSON.stringify(body)) && to - from > 1_000) {
      const mid = Math.floor((from + to) / 2);
      await this.#addLedger(accounts, from, mid);
      await this.#addLedger(accounts, mid, to);
      return;
    }
    assert.equal(status, 200, JSON.stringify(body));
    for (const t of body.totals as (DestinationAccount & { destinationId: string })[]) {
      const seen = accounts.get(t.destinationId) ?? { accepted: 0, delivered: 0, dead: 0, inFlight: 0 };
      accounts.set(t.destinationId, {
        accepted: seen.accepted + t.accepted,
        delivered: seen.delivered + t.delivered,
        dead: seen.dead + t.dead,
        inFlight: seen.inFlight + t.inFlight,
      });
    }
  }

  /** Reads the dead-letter topic into the ledger; returns messageId → number of dead-letter records. */
  async collectDeadLetters(expected: number, timeoutMs = 20_000): Promise<Map<string, number>> {
    const kafka = testKafka({
      brokers: this.brokers.split(','),
      clientId: 'ledger',
      logger: createLogger({ name: 'ledger', level: 'error' }),
      ...(this.options.security && { security: this.options.security }),
    });
    const records = await readTopic(kafka, this.topics.deadLetter!, { count: expected, timeoutMs, settleMs: 1_000 });
    const counts = new Map<string, number>();
    for (const r of records) {
      const id = r.headers[RETRY_HEADERS.messageId]!;
      counts.set(id, (counts.get(id) ?? 0) + 1);
      this.ledger.deadLettered.add(id);
    }
    return counts;
  }

  /** Waits until every acknowledged event was delivered or dead-lettered (or the timeout). */
  async settle(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.ledger.missing().length > 0) await new Promise((r) => setTimeout(r, 200));
  }

  /** Services that exited without being asked to, each with its last output: a drill checks this first. */
  unexpectedExits(): string[] {
    return this.processes().flatMap((svc) =>
      svc.unexpectedExits.map((e) => `${svc.name} exited (code ${e.code}, signal ${e.signal}):\n${e.output}`),
    );
  }

  /**
   * The ledger's summary (duplicates explained within `slackMs` of a disruption), printed as a test
   * diagnostic and on stdout (the drills' ledger lines), once it is checked that no service exited by itself.
   */
  report(t: TestContext, name: string, slackMs?: number): LedgerSummary {
    const summary = this.ledger.summary(slackMs);
    t.diagnostic(formatSummary(name, summary));
    console.log(formatSummary(name, summary));
    assert.deepEqual(this.unexpectedExits(), [], 'no service exited by itself');
    return summary;
  }

  async close(): Promise<void> {
    await Promise.all(this.processes().map((s) => s.sigterm()));
    await Promise.all(this.receivers.map((r) => r.close()));
    await this.agent.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
