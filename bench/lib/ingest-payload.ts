import { randomUUID } from 'node:crypto';

/** One call of about 600 bytes, as analytics clients send them. */
export function benchCall(i: number): Record<string, unknown> {
  return {
    type: 'track',
    userId: `user-${i % 5000}`,
    event: 'Order Completed',
    messageId: randomUUID(),
    timestamp: new Date().toISOString(),
    properties: {
      orderId: `o-${i}`,
      total: 129.95,
      currency: 'EUR',
      coupon: 'SPRING',
      items: [
        { sku: 'sku-123456', qty: 2, price: 49.99 },
        { sku: 'sku-654321', qty: 1, price: 29.97 },
      ],
    },
    context: {
      library: { name: 'analytics-go', version: '3.3.0' },
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
      page: { path: '/checkout/complete', url: 'https://shop.example.com/checkout/complete?ref=mail' },
    },
  };
}

export function benchBatch(calls: number, offset: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      batch: Array.from({ length: calls }, (_, i) => benchCall(offset + i)),
      sentAt: new Date().toISOString(),
    }),
  );
}

/** What a benchmark event carries besides its ids (`testEnvelope` fills in the rest). */
export const BENCH_EVENT = {
  sourceId: 's-bench',
  event: 'Order Completed',
  properties: { total: 42.5, currency: 'EUR', sku: 'SKU-12345', quantity: 2 },
  context: { ip: '203.0.113.7', library: { name: 'analytics-go', version: '3.3.0' } },
  timestamp: '2026-11-21T23:34:15.123Z',
};
