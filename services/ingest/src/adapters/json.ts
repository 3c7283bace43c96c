import sjson from 'secure-json-parse';
import { InvalidJsonError } from '../errors.ts';

/**
 * Parses a request body without prototype pollution (SPEC §12): `__proto__` keys and
 * `constructor.prototype` are removed before any object is used.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw new InvalidJsonError('body is empty');
  try {
    return sjson.parse(body, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (err) {
    throw new InvalidJsonError((err as Error).message);
  }
}
