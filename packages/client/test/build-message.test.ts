import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildMessage } from '../src/build-message.ts';
import type { BuildEnv } from '../src/build-message.ts';
import { LIBRARY_NAME, LIBRARY_VERSION, MAX_MESSAGE_BYTES } from '../src/constants.ts';
import { MessageTooLargeError, ValidationError } from '../src/errors.ts';

const env: BuildEnv = { now: () => Date.parse('2026-11-21T23:34:15.123Z'), uuid: () => 'uuid-1' };
const library = { name: LIBRARY_NAME, version: LIBRARY_VERSION };

describe('buildMessage validation', () => {
  const refused: Array<[string, Parameters<typeof buildMessage>[0], unknown, RegExp]> = [
    ['identify without identity', 'identify', { traits: { a: 1 } }, /userId or anonymousId is required/],
    ['track without identity', 'track', { event: 'E' }, /userId or anonymousId is required/],
    ['page without identity', 'page', { name: 'Home' }, /userId or anonymousId is required/],
    ['screen without identity', 'screen', { name: 'Home' }, /userId or anonymousId is required/],
    ['group without identity', 'group', { groupId: 'g' }, /userId or anonymousId is required/],
    ['empty userId counts as missing', 'identify', { userId: '' }, /userId or anonymousId is required/],
    ['track without event', 'track', { userId: 'u' }, /event is required/],
    ['track with empty event', 'track', { userId: 'u', event: '' }, /event is required/],
    ['group without groupId', 'group', { userId: 'u' }, /groupId is required/],
    ['alias without userId', 'alias', { previousId: 'p' }, /userId is required/],
    ['alias without previousId', 'alias', { userId: 'u' }, /previousId is required/],
    ['alias with anonymousId only', 'alias', { anonymousId: 'a', previousId: 'p' }, /userId is required/],
    ['non-string userId', 'identify', { userId: 42 }, /userId must be a string/],
    ['array properties', 'track', { userId: 'u', event: 'E', properties: [1] }, /properties must be an object/],
    ['bad timestamp', 'track', { userId: 'u', event: 'E', timestamp: 'yesterday' }, /not ISO 8601/],
    ['invalid Date', 'track', { userId: 'u', event: 'E', timestamp: new Date(Number.NaN) }, /invalid Date/],
    ['not an object', 'track', null, /expected an object/],
    ['unserialisable', 'track', { userId: 'u', event: 'E', properties: { n: 1n } }, /cannot be serialised/],
  ];
  for (const [name, type, params, pattern] of refused) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => buildMessage(type, params as never, env),
        (err: unknown) => {
          assert.ok(err instanceof ValidationError);
          assert.equal(err.code, 'invalid_message');
          assert.match(err.message, pattern);
          return true;
        },
      );
    });
  }

  it('accepts anonymousId alone, and alias without identity fields', () => {
    assert.doesNotThrow(() => buildMessage('track', { anonymousId: 'a', event: 'E' }, env));
    assert.doesNotThrow(() => buildMessage('alias', { userId: 'new', previousId: 'old' }, env));
  });
});

describe('buildMessage size limit', () => {
  const padded = (pad: number) =>
    buildMessage('track', { userId: 'u', event: 'E', properties: { p: 'x'.repeat(pad) } }, env);
  const base = padded(0).bytes;

  it('accepts a message of exactly 32,000 bytes', () => {
    const built = padded(MAX_MESSAGE_BYTES - base);
    assert.equal(built.bytes, MAX_MESSAGE_BYTES);
  });

  it('refuses a message of 32,001 bytes with MessageTooLargeError', () => {
    assert.throws(
      () => padded(MAX_MESSAGE_BYTES - base + 1),
      (err: unknown) => err instanceof MessageTooLargeError && err.code === 'message_too_large' && err.bytes === 32_001,
    );
  });

  it('counts UTF-8 bytes, not characters', () => {
    const built = buildMessage('track', { userId: 'u', event: 'E', properties: { p: 'é' } }, env);
    assert.equal(built.bytes, Buffer.byteLength(built.json));
    assert.equal(built.bytes, built.json.length + 1);
  });
});

describe('buildMessage wire shape', () => {
  it('builds track with messageId, call-time timestamp and context.library', () => {
    const { message, json } = buildMessage(
      'track',
      {
        userId: 'u',
        event: 'Order Completed',
        properties: { total: 42.5 },
        integrations: { All: false, Webhooks: true },
        context: { ip: '203.0.113.7' },
      },
      env,
    );
    assert.deepEqual(JSON.parse(json), {
      type: 'track',
      messageId: 'uuid-1',
      timestamp: '2026-11-21T23:34:15.123Z',
      userId: 'u',
      context: { ip: '203.0.113.7', library },
      integrations: { All: false, Webhooks: true },
      event: 'Order Completed',
      properties: { total: 42.5 },
    });
    assert.equal(message.messageId, 'uuid-1');
  });

  it('keeps the caller timestamp, normalised to UTC with milliseconds', () => {
    const { message } = buildMessage('identify', { userId: 'u', timestamp: '2015-02-03T08:24:14-0800' }, env);
    assert.equal(message.timestamp, '2015-02-03T16:24:14.000Z');
    const fromDate = buildMessage(
      'identify',
      { userId: 'u', timestamp: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)) },
      env,
    );
    assert.equal(fromDate.message.timestamp, '2020-01-02T03:04:05.006Z');
  });

  it('keeps a caller messageId', () => {
    assert.equal(buildMessage('identify', { userId: 'u', messageId: 'mine' }, env).message.messageId, 'mine');
  });

  it('puts page fields under properties, name and category at the top', () => {
    const { json } = buildMessage(
      'page',
      { anonymousId: 'a', name: 'Pricing', category: 'Docs', properties: { url: 'https://x.test/p', title: 'P' } },
      env,
    );
    const parsed = JSON.parse(json);
    assert.deepEqual(parsed.properties, { url: 'https://x.test/p', title: 'P' });
    assert.equal(parsed.name, 'Pricing');
    assert.equal(parsed.category, 'Docs');
    assert.equal(parsed.traits, undefined);
  });

  it('sends only the fields that belong to each type', () => {
    const stray = {
      name: 'n',
      category: 'c',
      properties: { p: 1 },
      traits: { t: 1 },
      event: 'e',
      groupId: 'g',
      previousId: 'p',
    };
    const keys = (type: Parameters<typeof buildMessage>[0]) =>
      Object.keys(JSON.parse(buildMessage(type, { userId: 'u', ...stray } as never, env).json)).sort();
    const common = ['context', 'messageId', 'timestamp', 'type', 'userId'];
    assert.deepEqual(keys('identify'), [...common, 'traits'].sort());
    assert.deepEqual(keys('track'), [...common, 'event', 'properties'].sort());
    assert.deepEqual(keys('page'), [...common, 'category', 'name', 'properties'].sort());
    assert.deepEqual(keys('screen'), [...common, 'category', 'name', 'properties'].sort());
    assert.deepEqual(keys('group'), [...common, 'groupId', 'traits'].sort());
    assert.deepEqual(keys('alias'), [...common, 'previousId'].sort());
  });

  it('overrides a caller context.library and does not mutate the caller context', () => {
    const context = { library: { name: 'other', version: '9' }, locale: 'fr' };
    const { message } = buildMessage('identify', { userId: 'u', context }, env);
    assert.deepEqual(message.context, { library, locale: 'fr' });
    assert.deepEqual(context.library, { name: 'other', version: '9' });
  });
});
