import sjson from 'secure-json-parse';
import { InvalidJsonError } from '../errors.ts';

// Byte patterns that must be present for a body to hold a `__proto__` or `constructor` key:
// the literal names, or a `\u` escape (which could spell them).
const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * Parses a request body without prototype pollution (SPEC §12): `__proto__` keys and
 * `constructor.prototype` are removed before any object is used. A body that contains none of
 * the byte patterns above (nearly all of them; checked with `Buffer#indexOf`, far cheaper than
 * secure-json-parse's regexes over the decoded text) cannot hold such a key and goes straight
 * to `JSON.parse`; any other body goes through secure-json-parse.
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) throw new InvalidJsonError('body is empty');
  try {
    if (body.indexOf(PROTO) === -1 && body.indexOf(CONSTRUCTOR) === -1 && body.indexOf(UNICODE_ESCAPE) === -1) {
      // Same BOM handling as secure-json-parse.
      const text = body.toString('utf8');
      return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    }
    return sjson.parse(body, undefined, { protoAction: 'remove', constructorAction: 'remove' });
  } catch (err) {
    throw new InvalidJsonError((err as Error).message);
  }
}
