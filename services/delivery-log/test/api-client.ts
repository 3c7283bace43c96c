import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../src/adapters/http/openapi.ts';

/** A call of the log's API as a client makes it: with a bearer token, a JSON body, its answer parsed. */
export interface ApiCall {
  method?: string;
  path: string;
  /** The bearer token; none: no `Authorization` header. */
  token?: string;
  body?: unknown;
  /** The `If-Match` of a versioned change: `"<version>"`. */
  ifMatch?: string;
}

/** Calls the API of the log listening on `port`; the answer's status, headers, JSON body and text. */
export async function callApi(port: number, request: ApiCall) {
  const res = await fetch(`http://127.0.0.1:${port}${request.path}`, {
    method: request.method ?? 'GET',
    headers: {
      ...(request.token !== undefined && { authorization: `Bearer ${request.token}` }),
      'content-type': 'application/json',
      ...(request.ifMatch !== undefined && { 'if-match': request.ifMatch }),
    },
    ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as any, text };
}

/** Asserts that a value is what the served OpenAPI document's schema `name` describes. */
export function openApiConformance(): (name: string, value: unknown) => void {
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi', components: openApiDocument.components });
  return (name, value) => {
    const validate = ajv.getSchema(`openapi#/components/schemas/${name}`)!;
    assert.ok(validate(value), `${name}: ${ajv.errorsText(validate.errors)}`);
  };
}
