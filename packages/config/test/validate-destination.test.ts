import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, DestinationIds, parseConfig, validateDestination } from '@sluice/config';

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const base = { id: 'd-1', type: 'webhooks', sourceIds: ['src-1'], settings: { webhookUrl: 'https://x.example/' } };
const fileWith = (destination: unknown) => ({
  sources: [{ id: 'src-1', writeKeys: ['key-1'] }],
  destinations: [destination],
});
const sourcesOfFile = { sourceIds: ['src-1'] };
const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` }));
const endpoint = (extra: Record<string, unknown>) => ({ ...base, settings: { webhooks: [{ ...extra }] } });

/** The error `run` throws; fails the test when it throws none or another kind. */
function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    return err;
  }
  assert.fail('no error');
}

describe('config: one destination is validated by the rules of the file', () => {
  const cases: [string, unknown, string][] = [
    ['six endpoints', { ...base, settings: { webhooks: six } }, 'settings.webhooks'],
    [
      'legacy url makes six',
      { ...base, settings: { webhookUrl: 'https://x.example/', webhooks: six.slice(0, 5) } },
      'settings.webhooks',
    ],
    ['no endpoint', { ...base, settings: {} }, 'settings.webhooks'],
    [
      'second endpoint not a URL',
      { ...base, settings: { webhooks: [{ url: 'https://a.example/' }, { url: 'example.com/hook' }] } },
      'settings.webhooks[1].url',
    ],
    ['ftp URL', endpoint({ url: 'ftp://example.com/' }), 'settings.webhooks[0].url'],
    [
      'reserved header',
      endpoint({ url: 'https://x.example/', headers: { 'x-signature': 'forged' } }),
      'settings.webhooks[0].headers.x-signature',
    ],
    [
      'CRLF in header value',
      endpoint({ url: 'https://x.example/', headers: { 'X-A': 'a\r\nX-Evil: 1' } }),
      'settings.webhooks[0].headers.X-A',
    ],
    ['unknown key', { ...base, bogus: 1 }, 'bogus'],
    ['missing id', { type: 'webhooks', settings: { webhookUrl: 'https://x.example/' } }, 'id'],
    ['wrong type', { ...base, type: 'email' }, 'type'],
    ['unknown source', { ...base, sourceIds: ['nope'] }, 'sourceIds[0]'],
    ['batch wait too long', { ...base, batch: { maxWait: '11s' } }, 'batch.maxWait'],
    ['batch wait not a duration', { ...base, batch: { maxWait: 'soon' } }, 'batch.maxWait'],
    ['bad ordering', { ...base, ordering: 'per-event' }, 'ordering'],
    ['bad filter', { ...base, filter: { where: { field: 'properties.total', gte: 'ten' } } }, 'filter.where.gte'],
    ['reserved id', { ...base, id: 'sluice_operator-events' }, 'id'],
    [
      'standard-webhooks without secrets',
      { ...base, settings: { ...base.settings, signing: { schemes: ['standard-webhooks'] } } },
      'settings.signing.standardWebhooks.secrets',
    ],
    [
      'malformed whsec',
      {
        ...base,
        settings: {
          ...base.settings,
          signing: { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [{ secret: 'whsec_short' }] } },
        },
      },
      'settings.signing.standardWebhooks.secrets[0].secret',
    ],
    [
      'notAfter before notBefore',
      {
        ...base,
        settings: {
          ...base.settings,
          signing: {
            schemes: ['standard-webhooks'],
            standardWebhooks: {
              secrets: [{ secret: WHSEC, notBefore: '2026-02-01T00:00:00Z', notAfter: '2026-01-01T00:00:00Z' }],
            },
          },
        },
      },
      'settings.signing.standardWebhooks.secrets[0].notAfter',
    ],
    [
      'sharedSecret without x-signature',
      {
        ...base,
        settings: {
          ...base.settings,
          sharedSecret: 's',
          signing: { schemes: ['standard-webhooks'], standardWebhooks: { secrets: [{ secret: WHSEC }] } },
        },
      },
      'settings.sharedSecret',
    ],
  ];
  for (const [name, definition, field] of cases) {
    it(`${name}: ${field}, the file naming it under destinations[0]`, () => {
      const alone = configError(() => validateDestination(definition, sourcesOfFile));
      const inFile = configError(() => parseConfig(fileWith(definition), {}));
      assert.equal(alone.field, field);
      assert.equal(inFile.field, `destinations[0].${field}`);
      assert.equal(alone.problem, inFile.problem);
      assert.equal(alone.code, 'config_invalid');
    });
  }

  it('resolves a valid definition to the destination the file would give, defaults filled in', () => {
    const definition = {
      ...base,
      settings: {
        webhooks: [{ url: 'https://u:p@a.example/in?t=1', headers: { 'X-Team': 'orders' } }],
        signing: { schemes: ['x-signature', 'standard-webhooks'], standardWebhooks: { secrets: [{ secret: WHSEC }] } },
      },
      batch: {},
      ordering: 'per-user',
    };
    const input = structuredClone(definition);
    const { destination, definition: filled } = validateDestination(input, sourcesOfFile);
    assert.deepEqual(destination, parseConfig(fileWith(definition), {}).destinations[0]);
    assert.deepEqual(input, definition, 'the input is not changed');
    assert.equal(filled.name, 'Webhooks');
    assert.equal(filled.enabled, true);
    assert.deepEqual(filled.batch, { maxEvents: 100, maxBytes: 1024 * 1024, maxWait: '50ms' });
  });

  it('refuses { env } and { file } secrets unless given an environment, naming the field', () => {
    const definition = { ...base, settings: { ...base.settings, sharedSecret: { env: 'HOOK_SECRET' } } };
    const refused = configError(() => validateDestination(definition, sourcesOfFile));
    assert.equal(refused.field, 'settings.sharedSecret');
    assert.match(refused.problem, /the secret itself/);
    const headers = endpoint({ url: 'https://x.example/', headers: { Authorization: { file: '/etc/passwd' } } });
    assert.equal(
      configError(() => validateDestination(headers, sourcesOfFile)).field,
      'settings.webhooks[0].headers.Authorization',
    );
    const resolved = validateDestination(definition, { ...sourcesOfFile, env: { HOOK_SECRET: 'from-env' } });
    assert.equal(resolved.destination.sharedSecret, 'from-env');
  });

  it('checks sources only when they are given', () => {
    assert.deepEqual(validateDestination({ ...base, sourceIds: ['elsewhere'] }).destination.sourceIds, ['elsewhere']);
  });

  it("refuses an id another destination has, or that differs from one only by '.' and '_'", () => {
    const taken = { ...sourcesOfFile, destinationIds: ['orders.eu', 'billing'] };
    const clash = configError(() => validateDestination({ ...base, id: 'orders_eu' }, taken));
    assert.equal(clash.field, 'id');
    assert.match(clash.problem, /"orders_eu" and destination "orders\.eu" would name the same Kafka topics/);
    assert.equal(configError(() => validateDestination({ ...base, id: 'billing' }, taken)).field, 'id');
    assert.equal(validateDestination({ ...base, id: 'orders-eu' }, taken).destination.id, 'orders-eu');
  });

  it('takes the other ids and the sources prebuilt, with the same refusals', () => {
    const destinationIds = new DestinationIds(['orders.eu']);
    const taken = { sourceIds: new Set(sourcesOfFile.sourceIds), destinationIds };
    const clash = configError(() => validateDestination({ ...base, id: 'orders_eu' }, taken));
    assert.match(clash.problem, /"orders_eu" and destination "orders\.eu" would name the same Kafka topics/);
    assert.equal(validateDestination({ ...base, id: 'billing' }, taken).destination.id, 'billing');
    destinationIds.add('billing');
    assert.equal(configError(() => validateDestination({ ...base, id: 'billing' }, taken)).field, 'id');
    const unknown = configError(() => validateDestination({ ...base, sourceIds: ['elsewhere'] }, taken));
    assert.equal(unknown.field, 'sourceIds[0]');
  });

  it('holds a destination to sources of its tenant when the sources come with theirs, default `default`', () => {
    const sources = new Map([
      ['web', 'default'],
      ['shop', 'acme'],
    ]);
    assert.equal(
      validateDestination({ ...base, sourceIds: ['web'] }, { sourceIds: sources }).destination.tenant,
      'default',
    );
    const other = configError(() => validateDestination({ ...base, sourceIds: ['shop'] }, { sourceIds: sources }));
    assert.equal(other.field, 'sourceIds[0]');
    assert.match(other.problem, /belongs to tenant "acme", the destination to "default"/);
    const own = validateDestination({ ...base, tenant: 'acme', sourceIds: ['shop'] }, { sourceIds: sources });
    assert.equal(own.destination.tenant, 'acme');
  });

  it('a definition that is not an object is refused at the root', () => {
    assert.equal(configError(() => validateDestination('nope')).field, '(root)');
    assert.equal(configError(() => validateDestination(undefined)).field, '(root)');
  });
});
