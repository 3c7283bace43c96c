import kafkajs, { type AuthenticationProviderArgs, type Mechanism } from 'kafkajs';
import type { BearerToken } from './oauth-token.ts';

// kafkajs's typings declare this constructor without its message parameter.
const KafkaJSSASLAuthenticationError = kafkajs.KafkaJSSASLAuthenticationError as unknown as new (
  message: string,
) => Error;
const SOH = '\u0001';

/** SASL bytes as kafkajs frames them: a 32-bit length, then the bytes. */
function sizePrefixed(bytes: Buffer): Buffer {
  const out = Buffer.alloc(4 + bytes.length);
  out.writeInt32BE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
}

function unframe(framed: Buffer): Buffer {
  if (framed.length < 4) return Buffer.alloc(0);
  const length = framed.readInt32BE(0);
  return length <= 0 ? Buffer.alloc(0) : framed.subarray(4, 4 + length);
}

const bytesRequest = (text: string) => ({ encode: () => sizePrefixed(Buffer.from(text)) });
const bytesResponse = { decode: (raw: Buffer) => unframe(raw), parse: (data: Buffer) => data };

/**
 * SASL/OAUTHBEARER (RFC 7628) that notices a rejected token. kafkajs's own OAUTHBEARER treats
 * the broker's error challenge (`{"status":"invalid_token"}`) as success and then fails later with
 * a closed connection, which hides the cause; this one answers the challenge as the RFC says (a
 * lone %x01) and reports "authentication failed" with the broker's reason.
 */
export function oauthBearerMechanism(provider: () => Promise<BearerToken>): Mechanism {
  return {
    mechanism: 'oauthbearer',
    authenticationProvider: ({ host, port, saslAuthenticate }: AuthenticationProviderArgs) => ({
      authenticate: async () => {
        const token = await provider();
        const initial = `n,,${SOH}auth=Bearer ${token.value}${SOH}${SOH}`;
        let challenge: Buffer | undefined;
        try {
          challenge =
            (await saslAuthenticate({ request: bytesRequest(initial), response: bytesResponse })) ?? undefined;
        } catch (err) {
          throw new KafkaJSSASLAuthenticationError(`SASL OAUTHBEARER authentication failed: ${(err as Error).message}`);
        }
        if (challenge && challenge.length > 0) {
          const reason = challenge.toString('utf8');
          // The broker closes the exchange after this answer, with an error; the reason is in the challenge.
          await saslAuthenticate({ request: bytesRequest(SOH), response: bytesResponse }).catch(() => undefined);
          throw new KafkaJSSASLAuthenticationError(
            `SASL OAUTHBEARER authentication failed on ${host}:${port}: ${reason}`,
          );
        }
      },
    }),
  };
}
