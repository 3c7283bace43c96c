import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/index.ts';

const destination = (extra: Record<string, unknown> = {}) => ({
  id: 'crm',
  type: 'webhooks',
  settings: { webhooks: [{ url: 'https://crm.example/hook' }] },
  ...extra,
});

describe('destinations[].ordering (docs/reference/ordering.md)', () => {
  it('defaults to none (no ordering field); per-user with its dead-letter option', () => {
    assert.equal(parseConfig({ destinations: [destination()] }).destinations[0]!.ordering, undefined);
    assert.equal(
      parseConfig({ destinations: [destination({ ordering: 'none' })] }).destinations[0]!.ordering,
      undefined,
    );
    assert.deepEqual(parseConfig({ destinations: [destination({ ordering: 'per-user' })] }).destinations[0]!.ordering, {
      onDeadLetter: 'release',
    });
    const dlw = parseConfig({
      destinations: [destination({ ordering: 'per-user', orderingOnDeadLetter: 'dead-letter-waiting' })],
    });
    assert.deepEqual(dlw.destinations[0]!.ordering, { onDeadLetter: 'dead-letter-waiting' });
  });

  it('refuses any other value, naming the field', () => {
    for (const [extra, field] of [
      [{ ordering: 'per-session' }, 'destinations[0].ordering'],
      [{ ordering: 'per-user', orderingOnDeadLetter: 'drop' }, 'destinations[0].orderingOnDeadLetter'],
    ] as const) {
      assert.throws(
        () => parseConfig({ destinations: [destination(extra)] }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(field),
        field,
      );
    }
  });
});
