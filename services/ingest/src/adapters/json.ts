import sjson from 'secure-json-parse';
import { InvalidJsonError } from '../errors.ts';

// Byte patterns that must be present for a body to hold a `__proto__` or `constructor` key:
// the literal names, or a `\u` escape (which could spell them).
const PROTO = Buffer.from('__proto__');
const CONSTRUCTOR = Buffer.from('constructor');
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * Parses a request body without prototype pollution (docs/reference/security.md): `__proto__` keys and
 * `constructor.prototype` are removed before any object is used. A body that contains none of
 * the byte patterns above (nearly all of them; checked with `Buffer#indexOf`, far cheaper than
 * secure-json-parse's regexes over the decoded text) cannot hold such a key and goes straight
 * to `JSON.parse`; any other body goes through secure-json-parse.
 */
export function parseJsonBody(body: Buffer): unknown {
  return parseJsonWithText(body).value;
}

/**
 * `parseJsonBody`, plus the text that was parsed when plain `JSON.parse` read it (nothing
 * removed, so the text and the value agree member for member); undefined otherwise.
 */
export function parseJsonWithText(body: Buffer): { value: unknown; text: string | undefined } {
  if (body.length === 0) throw new InvalidJsonError('body is empty');
  try {
    if (body.indexOf(PROTO) === -1 && body.indexOf(CONSTRUCTOR) === -1 && body.indexOf(UNICODE_ESCAPE) === -1) {
      // Same BOM handling as secure-json-parse.
      const decoded = body.toString('utf8');
      const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
      return { value: JSON.parse(text), text };
    }
    return {
      value: sjson.parse(body, undefined, { protoAction: 'remove', constructorAction: 'remove' }),
      text: undefined,
    };
  } catch (err) {
    throw new InvalidJsonError((err as Error).message);
  }
}
