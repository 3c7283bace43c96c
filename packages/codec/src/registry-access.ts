import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';

/** Credentials and trust for the schema registry (`schemaRegistry` in the config file), secrets resolved. */
export interface RegistryAccess {
  /** HTTP Basic authentication (Confluent Cloud: the registry API key and secret). */
  username?: string;
  password?: string;
  /** `Authorization: Bearer <token>` instead of Basic. */
  bearerToken?: string;
  /** PEM CA bundle trusted for an `https` registry instead of the system roots. */
  caFile?: string;
}

type ClientArgs = ConstructorParameters<typeof SchemaRegistry>[0];
type Middleware = NonNullable<ClientArgs['middlewares']>[number];

const bearer =
  (token: string): Middleware =>
  () => ({
    async prepareRequest(next) {
      const request = await next();
      return request.enhance({ headers: { authorization: `Bearer ${token}` } });
    },
  });

/** The registry client's `auth` / `middlewares` / `agent` arguments for `access`. */
export function registryClientArgs(access: RegistryAccess | undefined): Omit<ClientArgs, 'host'> {
  if (!access) return {};
  let ca: Buffer | undefined;
  if (access.caFile) {
    try {
      ca = readFileSync(access.caFile);
    } catch (err) {
      throw new Error(`schemaRegistry.caFile: cannot read ${access.caFile}: ${(err as Error).message}`);
    }
  }
  return {
    ...(access.username !== undefined && { auth: { username: access.username, password: access.password ?? '' } }),
    ...(access.bearerToken !== undefined && { middlewares: [bearer(access.bearerToken)] }),
    // The registry client passes the agent to every request; https only (an http URL ignores it).
    ...(ca && { agent: new Agent({ ca, keepAlive: true }) as never }),
  };
}
