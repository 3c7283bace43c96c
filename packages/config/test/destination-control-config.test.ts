import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from '../src/index.ts';

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const refused = (input: unknown, field: string, env: NodeJS.ProcessEnv = {}) =>
  assert.throws(
    () => parseConfig(input, env),
    (err: unknown) => err instanceof ConfigError && err.field === field,
    field,
  );

describe('delivery.autoDisable and operatorEvents', () => {
  it('auto-disable defaults to 72 h; 0 and off turn it off; a duration sets it', () => {
    assert.equal(parseConfig({}).delivery.autoDisable.afterMs, 72 * 3_600_000);
    assert.equal(parseConfig({ delivery: { autoDisable: { after: 'off' } } }).delivery.autoDisable.afterMs, 0);
    assert.equal(parseConfig({ delivery: { autoDisable: { after: 0 } } }).delivery.autoDisable.afterMs, 0);
    assert.equal(parseConfig({ delivery: { autoDisable: { after: '90m' } } }).delivery.autoDisable.afterMs, 5_400_000);
    refused({ delivery: { autoDisable: { after: 'sometimes' } } }, 'delivery.autoDisable.after');
    refused({ delivery: { autoDisable: { every: '1h' } } }, 'delivery.autoDisable.every');
  });

  it('operatorEvents is absent by default; given, its secrets resolve and its defaults apply', () => {
    assert.equal(parseConfig({}).operatorEvents, undefined);
    const config = parseConfig(
      { operatorEvents: { url: { env: 'OPS_URL' }, secret: { env: 'OPS_SECRET' } } },
      { OPS_URL: 'https://ops.example/hooks', OPS_SECRET: WHSEC },
    );
    assert.deepEqual(config.operatorEvents, {
      url: 'https://ops.example/hooks',
      secret: WHSEC,
      deadLetterBurst: 100,
      filterRefusesAll: 1_000,
      secretExpiryNoticeMs: 24 * 3_600_000,
    });
  });

  it('refuses a bad operatorEvents naming the field', () => {
    refused({ operatorEvents: { secret: WHSEC } }, 'operatorEvents.url');
    refused({ operatorEvents: { url: 'https://ops.example' } }, 'operatorEvents.secret');
    refused({ operatorEvents: { url: 'not a url', secret: WHSEC } }, 'operatorEvents.url');
    refused({ operatorEvents: { url: 'ftp://ops.example', secret: WHSEC } }, 'operatorEvents.url');
    refused({ operatorEvents: { url: 'https://ops.example', secret: 'plain' } }, 'operatorEvents.secret');
    refused(
      { operatorEvents: { url: 'https://ops.example', secret: WHSEC, deadLetterBurst: 0 } },
      'operatorEvents.deadLetterBurst',
    );
    refused({ operatorEvents: { url: 'https://ops.example', secret: { env: 'NOPE' } } }, 'operatorEvents.secret');
  });

  it('operatorEvents.url is held to the rule of a destination endpoint URL: the same URLs taken, the same refused alike', () => {
    const verdict = (input: unknown, field: string) => {
      try {
        parseConfig(input, {});
        return 'taken';
      } catch (err) {
        assert.ok(err instanceof ConfigError && err.field === field, String(err));
        return err.problem;
      }
    };
    for (const url of [
      'https://ops.example/in',
      'http://ops.example/in',
      'http://127.0.0.1:9099/in',
      'ftp://ops.example',
      'not a url',
      'file:///etc/passwd',
    ]) {
      const endpoint = verdict(
        {
          sources: [{ id: 's', writeKeys: ['k'] }],
          destinations: [{ id: 'd', type: 'webhooks', settings: { webhooks: [{ url }] } }],
        },
        'destinations[0].settings.webhooks[0].url',
      );
      assert.equal(verdict({ operatorEvents: { url, secret: WHSEC } }, 'operatorEvents.url'), endpoint, url);
    }
  });

  it('names the destination-state and destination-actions topics', () => {
    const { topics } = parseConfig({}).kafka;
    assert.equal(topics.destinationState, 'sluice.destination-state');
    assert.equal(topics.destinationActions, 'sluice.destination-actions');
  });
});
