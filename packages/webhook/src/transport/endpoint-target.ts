import { InvalidEndpointUrlError } from '../errors.ts';

/** Where a webhook request goes: the endpoint URL's origin (one connection pool each) and its path with the query. */
export interface EndpointTarget {
  origin: string;
  path: string;
}

/** The target of an endpoint URL; `InvalidEndpointUrlError` for one that is not http or https, or unparsable. */
export function endpointTarget(url: string): EndpointTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidEndpointUrlError(url);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidEndpointUrlError(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}
