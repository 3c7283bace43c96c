import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { signBody, verifySignature } from '@sluice/webhook-signature';
import { loadVector } from '@sluice/testkit';

interface SignatureCase {
  secret: string;
  body: string;
  bodyBase64: string;
  xSignature: string;
}
const cases = loadVector<SignatureCase[]>('signatures.json');

describe('X-Signature: hex HMAC-SHA1 of the exact body bytes (test/vectors/signatures.json)', () => {
  for (const c of cases) {
    it(c.body.slice(0, 40), () => {
      const bytes = Buffer.from(c.bodyBase64, 'base64');
      assert.equal(bytes.toString('utf8'), c.body);
      assert.equal(signBody(c.secret, bytes), c.xSignature);
      assert.ok(verifySignature(c.secret, bytes, c.xSignature));
      assert.ok(verifySignature(c.secret, bytes, c.xSignature.toUpperCase()));
      assert.ok(!verifySignature(c.secret, Buffer.concat([bytes, Buffer.from(' ')]), c.xSignature));
      assert.ok(!verifySignature('other', bytes, c.xSignature));
    });
  }
});
