import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { CaFileError } from '../errors.ts';

/** The certificates a webhook request trusts with `delivery.caFile`: the system roots and the PEM bundle at `path`. */
export function caBundle(path: string): string[] {
  try {
    return [...rootCertificates, readFileSync(path, 'utf8')];
  } catch (err) {
    throw new CaFileError(path, err as Error);
  }
}
