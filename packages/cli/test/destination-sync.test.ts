import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RuntimeDefinition } from '@sluice/log-api';
import {
  describeStep,
  exportDestinations,
  planSync,
  resolveSecrets,
  secretVariable,
} from '../src/domain/destination-sync.ts';

const masked = { redacted: true };
const runtime = (id: string, over: Record<string, unknown> = {}): RuntimeDefinition => ({
  origin: 'runtime',
  id,
  tenant: 'default',
  sourceIds: ['web'],
  version: 2,
  updatedAt: '2026-12-01T00:00:00.000Z',
  updatedBy: 'admin',
  definition: {
    id,
    type: 'webhooks',
    sourceIds: ['web'],
    settings: {
      webhooks: [{ url: masked, headers: { authorization: masked } }],
      signing: { xSignature: { secrets: [{ secret: masked }] } },
    },
    ...over,
  },
});

describe('destinations export', () => {
  it('writes each masked secret as { env } and leaves signing secrets out', () => {
    const { destinations } = exportDestinations([runtime('crm')]);
    assert.deepEqual(destinations, [
      {
        id: 'crm',
        type: 'webhooks',
        sourceIds: ['web'],
        settings: {
          webhooks: [
            {
              url: { env: 'SLUICE_CRM_SETTINGS_WEBHOOKS_0_URL' },
              headers: { authorization: { env: 'SLUICE_CRM_SETTINGS_WEBHOOKS_0_HEADERS_AUTHORIZATION' } },
            },
          ],
        },
      },
    ]);
    assert.equal(secretVariable('bill.ing', 'settings.webhookUrl'), 'SLUICE_BILL_ING_SETTINGS_WEBHOOKURL');
  });
});

describe('destinations apply: the plan', () => {
  it('is empty for what export printed: export then apply is a no-op', () => {
    const current = [runtime('a'), runtime('b', { enabled: false })];
    assert.deepEqual(planSync(exportDestinations(current).destinations, current), []);
  });

  it('creates, replaces (naming the changed fields) and deletes, by id; a changed secret alone is no change', () => {
    const current = [runtime('a'), runtime('b'), runtime('gone')];
    const [a, b] = exportDestinations(current).destinations;
    const secretChanged = structuredClone(a!);
    (secretChanged.settings as { webhooks: { url: unknown }[] }).webhooks[0]!.url = 'https://new.example/';
    const steps = planSync([secretChanged, { ...b!, enabled: false }, { id: 'new', type: 'webhooks' }], current);
    assert.deepEqual(steps.map(describeStep), ['~ b (enabled)', '- gone', '+ new']);
    assert.equal(steps[0]!.kind === 'update' && steps[0]!.version, 2);
  });

  it("a file's destination without a tenant is in the default tenant: no change against one the API shows there; another tenant is a change", () => {
    const current = [runtime('a', { tenant: 'default' })];
    const { tenant: _shown, ...inFile } = current[0]!.definition;
    assert.deepEqual(planSync([inFile], current), []);
    assert.deepEqual(planSync([inFile], [runtime('a')]), [], 'neither names it');
    const moved = planSync([{ ...inFile, tenant: 'acme' }], current);
    assert.deepEqual(
      moved.map((s) => s.kind === 'update' && s.fields),
      [['tenant']],
    );
  });

  it('refuses a definition without an id or an id twice', () => {
    assert.throws(() => planSync([{ type: 'webhooks' }], []), /destinations\[0\]\.id is required/);
    assert.throws(() => planSync([{ id: 'a' }, { id: 'a' }], []), /destinations\[1\]\.id: a is given twice/);
  });
});

describe('destinations apply: secrets', () => {
  it('reads { env } from the environment, and names the field of one not set or still masked', () => {
    const definition = { id: 'a', settings: { webhookUrl: { env: 'HOOK' } } };
    assert.deepEqual(resolveSecrets(definition, { HOOK: 'https://h.example/' }), {
      id: 'a',
      settings: { webhookUrl: 'https://h.example/' },
    });
    assert.throws(() => resolveSecrets(definition, {}), /settings\.webhookUrl: environment variable HOOK is not set/);
    assert.throws(() => resolveSecrets({ sharedSecret: masked }, {}), /sharedSecret: a masked secret/);
  });
});
