import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { ConfigError, validateDestination } from '@sluice/config';
import { type CatalogEntry, REDACTED, redactEntry } from '@sluice/destination-catalog';
import { generateWebhookSecret } from '@sluice/secret-keyring';
import { T0 } from './fixtures.ts';

const token = () => randomBytes(12).toString('hex');

/** A destination with a secret in every field that can hold one, and the secrets. */
function secretive(): { entry: CatalogEntry; secrets: string[] } {
  const [user, password, pathToken, queryToken, auth, apiKey, legacy, shared, xSecret] = Array.from(
    { length: 9 },
    token,
  );
  const whsec = generateWebhookSecret();
  const definition = {
    id: 'billing',
    name: 'Billing',
    type: 'webhooks',
    sourceIds: ['web'],
    settings: {
      webhookUrl: `https://legacy.example/${legacy}`,
      webhooks: [
        {
          url: `https://${user}:${password}@hooks.example/in/${pathToken}?token=${queryToken}`,
          headers: { Authorization: `Bearer ${auth}`, 'X-Api-Key': apiKey },
        },
      ],
      sharedSecret: shared,
      signing: {
        schemes: ['x-signature', 'standard-webhooks'],
        xSignature: { secrets: [{ secret: xSecret, notAfter: '2026-11-02T00:00:00.000Z' }] },
        standardWebhooks: { secrets: [{ secret: whsec }] },
      },
    },
  };
  const entry = { id: 'billing', version: 3, updatedAt: new Date(T0).toISOString(), updatedBy: 'alice', definition };
  return {
    entry,
    secrets: [user, password, pathToken, queryToken, auth, apiKey, legacy, shared, xSecret, whsec] as string[],
  };
}

describe('catalog: a destination read back', () => {
  it('shows no byte of any secret: URLs with credentials, header values, shared and signing secrets', () => {
    const { entry, secrets } = secretive();
    const shown = JSON.stringify(redactEntry(entry));
    for (const secret of secrets) {
      // Any 6 characters in a row of a secret (all random) would be a part of it shown.
      for (let i = 0; i + 6 <= secret.length; i++)
        assert.ok(!shown.includes(secret.slice(i, i + 6)), `a part of a secret is shown: ${secret.slice(i, i + 6)}`);
    }
    assert.ok(!shown.includes('hooks.example'), 'a URL is masked whole, not in part');
  });

  it('replaces each secret field by the mask and keeps everything else', () => {
    const { entry } = secretive();
    const redacted = redactEntry(entry);
    assert.deepEqual(
      { ...redacted, definition: undefined },
      { id: 'billing', version: 3, updatedAt: entry.updatedAt, updatedBy: 'alice', definition: undefined },
    );
    assert.deepEqual(redacted.definition, {
      id: 'billing',
      name: 'Billing',
      type: 'webhooks',
      sourceIds: ['web'],
      settings: {
        webhookUrl: REDACTED,
        webhooks: [{ url: REDACTED, headers: { Authorization: REDACTED, 'X-Api-Key': REDACTED } }],
        sharedSecret: REDACTED,
        signing: {
          schemes: ['x-signature', 'standard-webhooks'],
          xSignature: { secrets: [{ secret: REDACTED, notAfter: '2026-11-02T00:00:00.000Z' }] },
          standardWebhooks: { secrets: [{ secret: REDACTED }] },
        },
      },
    });
    assert.match(JSON.stringify(entry.definition), /Bearer/, 'the entry itself is not changed');
  });

  it('a definition read back and sent again as it is is refused naming a secret field, never stored masked', () => {
    const { entry } = secretive();
    assert.throws(
      () => validateDestination(redactEntry(entry).definition),
      (err) => err instanceof ConfigError && err.field.startsWith('settings.'),
    );
  });
});
