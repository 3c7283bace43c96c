import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Endpoint } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { startReceiver, type Receiver } from '@sluice/testkit';
import { Registry } from 'prom-client';
import { DestinationCap, type Progress } from '../src/transport/destination-cap.ts';
import { UndiciWebhookClient, type WebhookClient } from '../src/transport/webhook-client.ts';
import { AddressPolicy } from '@sluice/webhook';
import { breakerResult } from '../src/attempt/endpoint-gate.ts';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { EndpointGates } from '../src/attempt/endpoint-gates.ts';
import { sendRequest } from '../src/attempt/endpoint-request.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';

const ANSWER_MS = 200;
const body = Buffer.from('{}');

describe('the wait for a pooled connection, reported apart from the endpoint time', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver({ behaviour: () => ({ status: 200, delayMs: ANSWER_MS }) });
  });
  after(() => receiver.close());

  const sendFour = async (connections: number) => {
    const client = new UndiciWebhookClient({
      settings: () => ({ connections }),
      policy: () => new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] }),
    });
    try {
      const request = { url: receiver.url, headers: {}, body, timeoutMs: 10_000 };
      // A first round opens the connections: the second one measures waits, not connects.
      await Promise.all([1, 2, 3, 4].map(() => client.send(request)));
      return await Promise.all([1, 2, 3, 4].map(() => client.send(request)));
    } finally {
      await client.close();
    }
  };

  it('four requests on one connection: the last waited for the three before it', async () => {
    const results = await sendFour(1);
    for (const r of results) assert.equal(r.outcome, 'success');
    const waits = results.map((r) => r.connectionWaitMs ?? Number.NaN).sort((a, b) => a - b);
    assert.ok(waits[3]! >= 3 * ANSWER_MS * 0.9, `the last waited for three answers (${waits})`);
    const last = results.find((r) => r.connectionWaitMs === waits[3])!;
    assert.ok(last.latencyMs - waits[3]! < waits[3]!, `most of its ${last.latencyMs} ms was the wait`);
  });

  it('four requests on four connections: none waited for another', async () => {
    const results = await sendFour(4);
    for (const r of results) {
      assert.equal(r.outcome, 'success');
      assert.ok(r.connectionWaitMs !== undefined && r.connectionWaitMs < ANSWER_MS, `waited ${r.connectionWaitMs}`);
    }
  });
});

describe("an endpoint's breaker, with more requests than connections", () => {
  const timeoutsThrough = async (answerMs: number) => {
    const receiver = await startReceiver({ behaviour: () => ({ status: 200, delayMs: answerMs }) });
    const client = new UndiciWebhookClient({
      settings: () => ({ connections: 1 }),
      policy: () => new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] }),
    });
    try {
      const request = { url: receiver.url, headers: {}, body, timeoutMs: 500 };
      return await Promise.all(Array.from({ length: 8 }, () => client.send(request)));
    } finally {
      await client.close();
      await receiver.close();
    }
  };
  it("timeouts of requests queued behind a healthy endpoint's one connection do not count", async () => {
    const results = await timeoutsThrough(150);
    const timedOut = results.filter((r) => r.error === 'timeout');
    assert.ok(timedOut.length >= 3, `the queue made requests time out (${timedOut.length})`);
    for (const r of timedOut)
      assert.ok(r.connectionWaitMs! * 2 > r.latencyMs, `queued ${r.connectionWaitMs} of ${r.latencyMs} ms`);
    assert.ok(!results.map(breakerResult).includes('failed'), 'none counts against the endpoint');
  });

  it('an endpoint that holds its requests past the timeout still counts', async () => {
    const results = await timeoutsThrough(2_000);
    assert.ok(results.map(breakerResult).includes('failed'), 'the request on the wire timed out at the endpoint');
  });
});

describe('a destination is judged slow by its endpoint time, not by its own queue for connections', () => {
  const endpoint: Endpoint = { ref: 'https://a.example/hook', url: 'https://a.example/hook', headers: {} };

  /** Requests of `latencyMs` each (of which `waitMs` queued for a connection) on a clock moved by the client. */
  const destination = (clock: { now: number }, latencyMs: number, waitMs: number) => {
    const client: WebhookClient = {
      send: async (): Promise<AttemptResult> => {
        clock.now += latencyMs;
        return {
          endpoint: endpoint.url,
          outcome: 'success',
          at: clock.now,
          latencyMs,
          connectionWaitMs: waitMs,
          status: 200,
        };
      },
      close: async () => undefined,
    };
    return {
      metrics: new DelivererMetrics(new Registry()),
      gates: new EndpointGates(createLogger({ name: 'test', level: 'silent' })),
      client,
      now: () => clock.now,
    };
  };

  const judgeAfter = async (latencyMs: number, waitMs: number) => {
    const clock = { now: 1_000_000 };
    const progress: Progress = { finishedAt: Number.NEGATIVE_INFINITY, finished: 0 };
    const busy = new DestinationCap(256, 250, { progress, now: () => clock.now });
    const quiet = new DestinationCap(256, 250, { progress, now: () => clock.now });
    const request = { url: endpoint.url, headers: {}, body, timeoutMs: 5_000 };
    for (let i = 0; i < 8; i += 1) {
      await sendRequest(
        destination(clock, latencyMs, waitMs),
        { endpoint, probe: false },
        { destinationId: 'busy', cap: busy, request, id: 'm' },
      );
      await sendRequest(
        destination(clock, 130, 0),
        { endpoint, probe: false },
        { destinationId: 'quiet', cap: quiet, request, id: 'm' },
      );
    }
    busy.judge(Math.min(busy.latencyMs!, quiet.latencyMs!));
    return busy;
  };

  it('600 ms a request, 525 of them queued behind its own requests: not slow beside a 130 ms destination', async () => {
    const busy = await judgeAfter(600, 525);
    assert.equal(busy.slow, false);
    assert.equal(Math.round(busy.latencyMs!), 75);
  });

  it('600 ms a request at the endpoint: slow beside a 130 ms destination', async () => {
    const busy = await judgeAfter(600, 0);
    assert.equal(busy.slow, true);
  });
});
