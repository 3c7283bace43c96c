import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CodedError } from '@sluice/errors';
import { TracingConfigError, tracingSettings } from '@sluice/tracing';

test('a tracing variable Sluice cannot honour is a TracingConfigError derived from CodedError, not retryable', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h' };
  assert.doesNotThrow(() => tracingSettings('ingest', { ...endpoint, OTEL_TRACES_SAMPLER: 'always_on' }));
  assert.throws(
    () => tracingSettings('ingest', { ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }),
    (err: unknown) => {
      assert.ok(err instanceof TracingConfigError && err instanceof CodedError);
      assert.deepEqual(
        { name: err.name, code: err.code, retryable: err.retryable },
        { name: 'TracingConfigError', code: 'invalid_tracing_config', retryable: false },
      );
      return true;
    },
  );
});
