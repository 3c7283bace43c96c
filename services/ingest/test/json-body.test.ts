import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonWithText } from '../src/adapters/json.ts';

test('a body that could hold __proto__ or constructor keys goes through the secure parser; any other to JSON.parse with its text', () => {
  const secure = [
    '{"__proto__":{"admin":true},"a":1}',
    '{"a":{"constructor":{"prototype":{"admin":true}}}}',
    '{"\\u005f_proto__":{"admin":true}}',
    '{"a":"\\u00e9"}',
  ];
  for (const text of secure) {
    const parsed = parseJsonWithText(Buffer.from(text));
    assert.equal(parsed.text, undefined, text);
    assert.equal(({} as { admin?: boolean }).admin, undefined);
    assert.equal(Object.hasOwn(parsed.value as object, '__proto__'), false, text);
  }
  // Invalid UTF-8 next to a pattern: decoding never swallows the ASCII bytes of a pattern.
  const invalid = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xe2, 0x82]), Buffer.from('__proto__"}')]);
  assert.equal(parseJsonWithText(invalid).text, undefined);
  const plain = '\ufeff{"batch":[{"type":"track","event":"construct or"}]}';
  const parsed = parseJsonWithText(Buffer.from(plain));
  assert.equal(parsed.text, plain.slice(1));
  assert.deepEqual(parsed.value, { batch: [{ type: 'track', event: 'construct or' }] });
});
