import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  ConfigError,
  ConfigStore,
  DEMO_CONFIG_PATH,
  loadConfigFile,
  parseConfig,
  parseDuration,
  readEnv,
} from '@sluice/config';

const source = { id: 'src-1', writeKeys: ['key-1'] };
const destination = (settings: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  sources: [source],
  destinations: [{ id: 'd-1', type: 'webhooks', sourceIds: ['src-1'], settings, ...extra }],
});

describe('config: valid files', () => {
  it('fills every default of docs/reference/retries.md, limits.md, operating-interface.md', () => {
    const config = parseConfig({});
    assert.equal(config.delivery.timeoutMs, 5_000);
    assert.equal(config.retry.windowMs, 4 * 3_600_000);
    assert.deepEqual(config.retry.scheduleMs, [10e3, 30e3, 60e3, 120e3, 300e3, 600e3, 1200e3, 1800e3, 3600e3]);
    assert.equal(config.retry.jitter, 0.1);
    assert.equal(config.kafka.topics.events, 'sluice.events');
    assert.equal(config.kafka.topics.deadLetter, 'sluice.dead-letter');
    assert.equal(config.delivery.ssrf.enabled, true);
    assert.deepEqual(config.deliveryLog.trustedProxies, []);
  });

  it('takes trusted proxies as CIDRs, single addresses or named ranges', () => {
    const trustedProxies = ['10.0.0.0/8', '192.0.2.7', 'fd00::/8', 'loopback'];
    assert.deepEqual(parseConfig({ deliveryLog: { trustedProxies } }).deliveryLog.trustedProxies, trustedProxies);
  });

  it('puts the legacy webhookUrl first and resolves { env } secrets', () => {
    const config = parseConfig(
      destination({
        webhookUrl: 'https://a.example/legacy',
        webhooks: [{ url: 'https://b.example/x', headers: { 'X-Team': 'data' } }],
        sharedSecret: { env: 'HOOK_SECRET' },
      }),
      { HOOK_SECRET: 's3cret' },
    );
    const d = config.destinations[0]!;
    assert.deepEqual(
      d.endpoints.map((e) => e.url),
      ['https://a.example/legacy', 'https://b.example/x'],
    );
    assert.equal(d.sharedSecret, 's3cret');
    assert.equal(d.enabled, true);
  });

  it('loads the bundled demo config', () => {
    const config = loadConfigFile(DEMO_CONFIG_PATH);
    assert.equal(config.sources[0]?.id, 'demo');
    assert.deepEqual(config.delivery.ssrf.allowCidrs, ['127.0.0.0/8']);
  });

  it('fills the batch defaults of docs/reference/batches.md, only where batch is set', () => {
    const hook = { webhookUrl: 'https://x.example/' };
    assert.equal(parseConfig(destination(hook)).destinations[0]!.batch, undefined);
    assert.deepEqual(parseConfig(destination(hook, { batch: {} })).destinations[0]!.batch, {
      maxEvents: 100,
      maxBytes: 1024 * 1024,
      maxWaitMs: 50,
    });
    const edges = { maxEvents: 1_000, maxBytes: 16 * 1024 * 1024, maxWait: '10s' };
    assert.deepEqual(parseConfig(destination(hook, { batch: edges })).destinations[0]!.batch, {
      maxEvents: 1_000,
      maxBytes: 16 * 1024 * 1024,
      maxWaitMs: 10_000,
    });
    const low = { maxEvents: 1, maxBytes: 1024, maxWait: 1 };
    assert.deepEqual(parseConfig(destination(hook, { batch: low })).destinations[0]!.batch, {
      maxEvents: 1,
      maxBytes: 1024,
      maxWaitMs: 1,
    });
  });

  it('validates a destination filter at load, naming the field of a refused one (docs/reference/filters.md)', () => {
    const hook = { webhookUrl: 'https://x.example/' };
    assert.equal(parseConfig(destination(hook)).destinations[0]!.filter, undefined);
    const filter = { types: ['track'], events: ['Order *'], where: { all: [{ field: 'properties.total', gte: 10 }] } };
    const parsed = parseConfig(destination(hook, { filter })).destinations[0]!.filter!;
    assert.deepEqual([...parsed.types!], ['track']);
    const refused = (f: unknown) => {
      try {
        parseConfig(destination(hook, { filter: f }));
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.message;
      }
      assert.fail('the filter should be refused');
    };
    const where = {
      all: [
        { field: 'type', equals: 'track' },
        { field: 'a', exists: true },
        { field: 'b', gte: '1' },
      ],
    };
    assert.equal(refused({ where }), 'destinations[0].filter.where.all[2].gte: must be a number');
    assert.equal(refused({ types: 'track' }), 'destinations[0].filter.types: must be array');
    assert.equal(refused({ kinds: ['track'] }), 'destinations[0].filter.kinds: is not a known setting');
    assert.equal(refused({}), 'destinations[0].filter: must set at least one of types, events, where');
  });

  it('keeps an endpoint whose ref is 1,000 characters (the longest), with its query redacted out of it', () => {
    const url = `https://x.example/${'p'.repeat(978)}?token=${'s'.repeat(2_000)}`;
    const config = parseConfig(destination({ webhooks: [{ url }] }));
    assert.equal(config.destinations[0]!.endpoints[0]!.ref.length, 1_000);
  });

  it('parses durations', () => {
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1.5s'), 1500);
    assert.equal(parseDuration('4h'), 14_400_000);
    assert.equal(parseDuration(42), 42);
  });
});

describe('config: every error names the field', () => {
  const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` }));
  const cases: [string, unknown, string][] = [
    ['unknown key', { bogus: true }, 'bogus'],
    ['empty writeKeys', { sources: [{ id: 's', writeKeys: [] }] }, 'sources[0].writeKeys'],
    ['missing source id', { sources: [{ writeKeys: ['k'] }] }, 'sources[0].id'],
    ['six endpoints', destination({ webhooks: six }), 'destinations[0].settings.webhooks'],
    [
      'legacy url makes six',
      destination({ webhookUrl: 'https://x.example/', webhooks: six.slice(0, 5) }),
      'destinations[0].settings.webhooks',
    ],
    [
      'duplicate endpoint',
      destination({ webhookUrl: 'https://x.example/', webhooks: [{ url: 'https://x.example/' }] }),
      'destinations[0].settings.webhooks',
    ],
    ['no endpoint', destination({}), 'destinations[0].settings.webhooks'],
    [
      'ref over 1,000 characters',
      destination({ webhooks: [{ url: `https://x.example/${'p'.repeat(983)}` }] }),
      'destinations[0].settings.webhooks',
    ],
    ['not a URL', destination({ webhooks: [{ url: 'example.com/hook' }] }), 'destinations[0].settings.webhooks[0].url'],
    ['ftp URL', destination({ webhooks: [{ url: 'ftp://example.com/' }] }), 'destinations[0].settings.webhooks[0].url'],
    [
      'reserved header',
      destination({ webhooks: [{ url: 'https://x.example/', headers: { 'x-signature': 'forged' } }] }),
      'destinations[0].settings.webhooks[0].headers.x-signature',
    ],
    [
      'CRLF in header value',
      destination({ webhooks: [{ url: 'https://x.example/', headers: { 'X-A': 'a\r\nX-Evil: 1' } }] }),
      'destinations[0].settings.webhooks[0].headers.X-A',
    ],
    [
      'bad header name',
      destination({ webhooks: [{ url: 'https://x.example/', headers: { 'X A': '1' } }] }),
      'destinations[0].settings.webhooks[0].headers.X A',
    ],
    [
      '21 headers',
      destination({
        webhooks: [
          {
            url: 'https://x.example/',
            headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])),
          },
        ],
      }),
      'destinations[0].settings.webhooks[0].headers',
    ],
    [
      'unknown source',
      {
        sources: [source],
        destinations: [
          { id: 'd', type: 'webhooks', sourceIds: ['nope'], settings: { webhookUrl: 'https://x.example/' } },
        ],
      },
      'destinations[0].sourceIds[0]',
    ],
    [
      'source of another tenant',
      {
        sources: [{ ...source, tenant: 'acme' }],
        destinations: [
          {
            id: 'd',
            tenant: 'globex',
            type: 'webhooks',
            sourceIds: [source.id],
            settings: { webhookUrl: 'https://x.example/' },
          },
        ],
      },
      'destinations[0].sourceIds[0]',
    ],
    ['bad tenant', { sources: [{ ...source, tenant: 'a b' }] }, 'sources[0].tenant'],
    [
      'wrong type',
      { sources: [source], destinations: [{ id: 'd', type: 'email', settings: { webhookUrl: 'https://x.example/' } }] },
      'destinations[0].type',
    ],
    ['bad duration', { delivery: { timeout: 'five seconds' } }, 'delivery.timeout'],
    ['jitter above 1', { retry: { jitter: 2 } }, 'retry.jitter'],
    [
      'missing env secret',
      destination({ webhookUrl: 'https://x.example/', sharedSecret: { env: 'NOT_SET_ANYWHERE' } }),
      'destinations[0].settings.sharedSecret',
    ],
    ['duplicate source id', { sources: [source, source] }, 'sources[1].id'],
    ['bad CIDR', { delivery: { ssrf: { allowCidrs: ['localhost'] } } }, 'delivery.ssrf.allowCidrs[0]'],
    [
      'bad trusted proxy',
      { deliveryLog: { trustedProxies: ['10.0.0.0/8', '10.0.0.0/33'] } },
      'deliveryLog.trustedProxies[1]',
    ],
    ['trusted proxy by name', { deliveryLog: { trustedProxies: ['proxy.internal'] } }, 'deliveryLog.trustedProxies[0]'],
    ['trusted proxies not a list', { deliveryLog: { trustedProxies: '10.0.0.1' } }, 'deliveryLog.trustedProxies'],
    ...(
      [
        ['maxEvents', 0],
        ['maxEvents', 1_001],
        ['maxEvents', 2.5],
        ['maxBytes', 1023],
        ['maxBytes', 16 * 1024 * 1024 + 1],
        ['maxWait', 0],
        ['maxWait', '10.001s'],
        ['maxWait', 'soon'],
        ['bogus', 1],
      ] as const
    ).map(([key, value]): [string, unknown, string] => [
      `batch.${key} = ${value}`,
      destination({ webhookUrl: 'https://x.example/' }, { batch: { [key]: value } }),
      `destinations[0].batch.${key}`,
    ]),
  ];
  for (const [name, input, field] of cases) {
    it(name, () => {
      assert.throws(
        () => parseConfig(input, {}),
        (err: unknown) => err instanceof ConfigError && err.field === field && err.message.includes(field),
      );
    });
  }

  it('names the file and the field for a file on disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    try {
      const path = join(dir, 'bad.json');
      writeFileSync(path, JSON.stringify({ delivery: { timeout: 'soon' } }));
      assert.throws(() => loadConfigFile(path), /bad\.json: delivery\.timeout: must be a duration/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names bad environment variables', () => {
    assert.throws(() => readEnv({ INGEST_PORT: 'eighty' }), /INGEST_PORT/);
    assert.throws(() => readEnv({ LOG_LEVEL: 'loud' }), /LOG_LEVEL/);
    assert.deepEqual(readEnv({ KAFKA_BROKERS: 'a:9092, b:9092' }).kafkaBrokers, ['a:9092', 'b:9092']);
  });
});

describe('config: destination ids name distinct topics', () => {
  const dest = (id: string) => ({
    id,
    type: 'webhooks',
    sourceIds: ['src-1'],
    settings: { webhookUrl: 'https://x.example/' },
  });
  it("ids that differ only by '.' and '_' are refused, naming both (Kafka takes them for one topic name)", () => {
    for (const [a, b] of [
      ['a.b', 'a_b'],
      ['orders_v2', 'orders.v2'],
      ['x._y', 'x_.y'],
    ] as const) {
      assert.throws(
        () => parseConfig({ sources: [source], destinations: [dest('crm'), dest(a), dest(b)] }, {}),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.field === 'destinations[2].id' &&
          err.problem.includes(JSON.stringify(b)) &&
          err.problem.includes(`destinations[1].id ${JSON.stringify(a)}`),
      );
    }
  });
  it("the operator events' id is reserved, in either spelling", () => {
    for (const id of ['sluice.operator-events', 'sluice_operator-events'])
      assert.throws(
        () => parseConfig({ sources: [source], destinations: [dest('crm'), dest(id)] }, {}),
        (err: unknown) =>
          err instanceof ConfigError && err.field === 'destinations[1].id' && err.problem.includes('reserved'),
      );
  });
  it('other ids are taken as they are (their topics keep their names)', () => {
    const ids = [
      'crm',
      'web-hook',
      'a.b',
      'a-b',
      'A_b',
      'a.b.c',
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
    ];
    const config = parseConfig({ sources: [source], destinations: ids.map(dest) }, {});
    assert.deepEqual(
      config.destinations.map((d) => d.id),
      ids,
    );
  });
});

describe("config: bearer tokens of Sluice's APIs", () => {
  const short = 'x'.repeat(31);
  const enough = 'x'.repeat(32);
  for (const field of ['ingest.adminToken', 'deliveryLog.adminToken'] as const) {
    const [section] = field.split('.') as [string];
    it(`${field}: fewer than 32 characters is refused naming the field (literal or from the environment)`, () => {
      for (const [token, env] of [
        [short, {}],
        [{ env: 'SHORT_TOKEN' }, { SHORT_TOKEN: short }],
        ['é'.repeat(31), {}],
      ] as const) {
        assert.throws(
          () => parseConfig({ [section]: { adminToken: token } }, env),
          (err: unknown) =>
            err instanceof ConfigError &&
            err.field === field &&
            /at least 32 characters, got 31/.test(err.problem) &&
            !err.message.includes(short),
        );
      }
    });
    it(`${field}: 32 characters or more is taken`, () => {
      const config = parseConfig({ [section]: { adminToken: { env: 'TOKEN' } } }, { TOKEN: enough });
      assert.equal((config[section as 'ingest'] as { adminToken?: string }).adminToken, enough);
      assert.equal(
        (
          parseConfig({ [section]: { adminToken: `${enough}-more` } }, {})[section as 'ingest'] as {
            adminToken?: string;
          }
        ).adminToken,
        `${enough}-more`,
      );
    });
  }
});

describe('config: reload', () => {
  it('applies a valid change and keeps the old config on an invalid one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const path = join(dir, 'sluice.yaml');
    const keepAlive = setInterval(() => undefined, 1_000); // the watcher itself does not hold the loop open
    try {
      writeFileSync(path, 'sources:\n  - id: a\n    writeKeys: [k1]\n');
      const store = ConfigStore.fromFile(path, {});
      const changed = new Promise((resolve) => store.once('change', resolve));
      store.watch(50);
      // The watcher's first look at the file may come after a write (a busy machine): write until
      // the change is seen, rather than guessing when it looked.
      let seen = false;
      void changed.then(() => (seen = true));
      for (let tries = 0; !seen; tries++) {
        assert.ok(tries < 200, 'the change seen within 10 s');
        writeFileSync(path, 'sources:\n  - id: b\n    writeKeys: [k2, k3]\n');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(store.current.sources[0]?.id, 'b');
      const invalid = new Promise<Error>((resolve) => store.once('invalid', resolve));
      writeFileSync(path, 'sources:\n  - id: c\n    writeKeys: []\n');
      assert.match((await invalid).message, /sources\[0\]\.writeKeys/);
      assert.equal(store.current.sources[0]?.id, 'b');
      store.close();
    } finally {
      clearInterval(keepAlive);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
