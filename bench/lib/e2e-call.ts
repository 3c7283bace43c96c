/**
 * The track call the end-to-end benchmark sends (~600 B with its envelope), so that benchmarks
 * measuring a later stage of the pipeline (the delivery log) work on the same records.
 */
export function e2eCall(messageId: string, i: number): Record<string, unknown> {
  return {
    type: 'track',
    messageId,
    userId: `user-${i % 1000}`,
    event: 'Order Completed',
    properties: {
      orderId: messageId,
      total: 42.5,
      currency: 'EUR',
      items: [{ sku: 'sku-1', qty: 2 }],
      note: 'x'.repeat(300),
    },
    context: { ip: '203.0.113.7', library: { name: 'bench', version: '1' } },
  };
}
