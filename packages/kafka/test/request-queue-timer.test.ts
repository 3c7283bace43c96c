import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKafka } from '../src/kafka-client.ts';
import { fixRequestQueueTimer, requestQueueClass } from '../src/request-queue-timer.ts';
import { createLogger } from '@sluice/logging';

interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  destroy(): void;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };
function queue(maxInFlightRequests: number | null): Queue {
  const RequestQueue = requestQueueClass();
  return new RequestQueue({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: '127.0.0.1:9092',
    logger: silent,
  }) as unknown as Queue;
}

test('createKafka applies the request-queue timer fix (kafkajs still has the shape it patches)', () => {
  createKafka({
    brokers: ['127.0.0.1:9092'],
    clientId: 'test',
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  assert.equal(fixRequestQueueTimer(), true);
});

test('an idle request queue arms no timer after checking its pending requests', () => {
  fixRequestQueueTimer();
  const q = queue(null);
  try {
    q.checkPendingRequests();
    assert.equal(q.throttleCheckTimeoutId, null, 'kafkajs 2.2.4 arms a 1 ms timer here, for ever');
  } finally {
    q.destroy();
  }
});

test('a pending request or an active throttle still schedules the check', () => {
  fixRequestQueueTimer();
  const full = queue(0); // no request may be in flight: whatever is pending stays pending
  const throttled = queue(null);
  try {
    full.pending.push({});
    full.checkPendingRequests();
    assert.notEqual(full.throttleCheckTimeoutId, null);

    throttled.throttledUntil = Date.now() + 60_000;
    throttled.checkPendingRequests();
    assert.notEqual(throttled.throttleCheckTimeoutId, null);
  } finally {
    full.pending.length = 0;
    full.destroy();
    throttled.destroy();
  }
});
