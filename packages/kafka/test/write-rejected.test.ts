import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Message } from 'kafkajs';
import { createLogger, type Logger } from '@sluice/logging';
import { RecordBatcherClosedError, type RecordSink } from '../src/record-batcher.ts';
import { SideRecordRefusedError } from '../src/errors.ts';
import { writeRejected } from '../src/write-rejected.ts';

const logger = createLogger({ name: 'write-rejected-test', level: 'silent' });
const HEADER = 'sluice-reject-value-dropped';
const rejected: Message = { key: 'k', value: 'v'.repeat(100), headers: { 'sluice-reject-code': 'not_json' } };

/** A sink that refuses (as Kafka refuses an oversized record) what `refuses` says, or fails with `fails`. */
function sink(refuses: (m: Message) => boolean, fails?: Error) {
  const written: Message[] = [];
  const s: RecordSink = {
    send: async (topic, m) => {
      if (fails) throw fails;
      if (refuses(m)) throw new SideRecordRefusedError(topic, 'MESSAGE_TOO_LARGE');
      written.push(m);
    },
  };
  return { s, written };
}

describe('writeRejected', () => {
  it('writes the rejected record as it is when Kafka takes it', async () => {
    const { s, written } = sink(() => false);
    const how = await writeRejected({
      sink: s,
      topic: 'rejected',
      message: rejected,
      valueDroppedHeader: HEADER,
      logger,
    });
    assert.equal(how, 'written');
    assert.deepEqual(written, [rejected]);
  });

  it('refused whole: written again without its value, the reason in the header, the other headers kept', async () => {
    const { s, written } = sink((m) => m.value !== null);
    const how = await writeRejected({
      sink: s,
      topic: 'rejected',
      message: rejected,
      valueDroppedHeader: HEADER,
      logger,
    });
    assert.equal(how, 'without_value');
    assert.deepEqual(written, [
      { key: 'k', value: null, headers: { 'sluice-reject-code': 'not_json', [HEADER]: 'MESSAGE_TOO_LARGE' } },
    ]);
  });

  it('refused even without its value: logged (no content) and resolved, never thrown', async () => {
    const { s, written } = sink(() => true);
    const errors: unknown[] = [];
    const recording = { error: (fields: unknown) => void errors.push(fields) } as unknown as Logger;
    const how = await writeRejected({
      sink: s,
      topic: 'rejected',
      message: rejected,
      valueDroppedHeader: HEADER,
      logger: recording,
    });
    assert.equal(how, 'dropped');
    assert.equal(written.length, 0);
    assert.deepEqual(errors, [{ topic: 'rejected', reason: 'MESSAGE_TOO_LARGE' }]);
  });

  it('any other failure (the batcher closed at shutdown) is thrown on: the record must be read again', async () => {
    const { s } = sink(() => false, new RecordBatcherClosedError('closed'));
    await assert.rejects(
      writeRejected({ sink: s, topic: 'rejected', message: rejected, valueDroppedHeader: HEADER, logger }),
      RecordBatcherClosedError,
    );
  });
});
