import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_EVENT_BYTES, MAX_RENDERED_EVENT_BYTES } from '../src/constants.ts';
import { cutText, jsonProblem, printedNumberLength, renderEvent, storedEvent } from '../src/domain/event-text.ts';

describe('delivery-log: how an event is stored and rendered (no database)', () => {
  it('sizes a number as PostgreSQL prints it', () => {
    assert.equal(printedNumberLength('1', '', -16383), 16_385);
    assert.equal(printedNumberLength('1', '', 400), 401);
    assert.equal(printedNumberLength('12', '5', 0), 4);
    assert.equal(printedNumberLength('0', `${'0'.repeat(16_400)}1`, 0), 16_403);
  });

  it('keeps as text what the JSON type refuses or blows up, and nothing else', () => {
    assert.equal(jsonProblem('{"n":1e-16384}'), 'number_out_of_range');
    assert.equal(jsonProblem('{"n":1e-16383}'), 'number_out_of_range');
    assert.equal(jsonProblem('{"n":1e999999999999999}'), 'number_out_of_range');
    assert.equal(jsonProblem(`[${'1e-900,'.repeat(80)}1]`), 'number_out_of_range', 'many long ones add up');
    assert.equal(jsonProblem('{"n":1e400,"m":-0.5e-10,"s":"1e-99999 in a string \\" ["}'), undefined);
    assert.equal(jsonProblem(`${'['.repeat(200)}${']'.repeat(200)}`), 'too_deep');
    assert.equal(jsonProblem(`${'['.repeat(100)}${']'.repeat(100)}`), undefined);
    assert.equal(jsonProblem(`"${'x'.repeat(MAX_EVENT_BYTES)}"`), 'too_large');
    assert.deepEqual(storedEvent('{"a":1}'), { json: '{"a":1}' });
    const cut = storedEvent(`"${'é'.repeat(MAX_EVENT_BYTES)}"`);
    assert.ok('text' in cut && cut.text !== null && Buffer.byteLength(cut.text) <= MAX_EVENT_BYTES);
    assert.ok('note' in cut && cut.note === 'too_large');
  });

  it('cuts on a character boundary', () => {
    assert.equal(cutText('aé', 2), 'a');
    assert.equal(cutText('abc', 5), 'abc');
  });

  it('renders JSON, kept text, or a cut text with a note; never more than the cap', () => {
    assert.deepEqual(renderEvent('{"a":1}', null, null), { event: { a: 1 }, eventText: null, eventNote: null });
    assert.deepEqual(renderEvent(null, '{"n":1e-16384}', 'number_out_of_range'), {
      event: null,
      eventText: '{"n":1e-16384}',
      eventNote: 'number_out_of_range',
    });
    const long = renderEvent(`"${'x'.repeat(MAX_RENDERED_EVENT_BYTES)}"`, null, null);
    assert.equal(long.eventNote, 'cut_for_display');
    assert.equal(Buffer.byteLength(long.eventText!), MAX_RENDERED_EVENT_BYTES);
    assert.deepEqual(renderEvent(null, null, 'unstorable'), { event: null, eventText: null, eventNote: 'unstorable' });
  });
});
