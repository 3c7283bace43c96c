import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConfigError, parseConfig } from '@sluice/config';
import { CodedError } from '@sluice/errors';

it('a refused config is a ConfigError derived from CodedError: config_invalid, not retryable, naming the field', () => {
  assert.doesNotThrow(() => parseConfig({ kafka: { partitions: 3 } }));
  assert.throws(
    () => parseConfig({ kafka: { partitons: 3 } }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError && err instanceof CodedError);
      assert.deepEqual(
        { name: err.name, code: err.code, retryable: err.retryable, field: err.field },
        { name: 'ConfigError', code: 'config_invalid', retryable: false, field: 'kafka.partitons' },
      );
      return true;
    },
  );
});
