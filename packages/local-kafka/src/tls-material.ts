// A throwaway certificate authority and the certificates a secured local broker needs, made with
// the system's openssl: the broker's (for 127.0.0.1 and localhost) and a client certificate for
// mutual TLS. Everything is PEM: the broker reads PEM key stores directly (KIP-651), and so do
// Node's TLS and Sluice's `kafka.ssl` settings.

import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TlsMaterial {
  /** The throwaway CA's certificate: the value for `kafka.ssl.caFile`. */
  caFile: string;
  /** Broker key store: its PKCS#8 key followed by its certificate (signed by the CA). */
  brokerKeyStoreFile: string;
  /** A client certificate signed by the CA, and its key, for `kafka.ssl.certFile` / `keyFile`. */
  clientCertFile: string;
  clientKeyFile: string;
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { cwd }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      reject(
        new Error(
          missing
            ? 'local-kafka: a secured broker needs openssl on PATH'
            : `local-kafka: openssl ${args[0]} failed: ${stderr}`,
        ),
      );
    });
  });
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** A certificate for `cn` signed by the CA in `dir`; returns nothing, writes `<name>.key` and `<name>.pem`. */
async function signed(dir: string, name: string, cn: string, extensions: string): Promise<void> {
  await openssl(['req', ...KEY, '-subj', `/CN=${cn}`, '-keyout', `${name}.key`, '-out', `${name}.csr`], dir);
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '7',
      '-sha256',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ],
    dir,
  );
}

/** Generates a CA, a broker certificate for 127.0.0.1/localhost and a client certificate in `dir`. */
export async function generateTlsMaterial(dir: string): Promise<TlsMaterial> {
  await openssl(
    [
      'req',
      '-x509',
      ...KEY,
      '-days',
      '7',
      '-subj',
      '/CN=Sluice local-kafka throwaway CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    ],
    dir,
  );
  await signed(dir, 'broker', 'localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await signed(dir, 'client', 'sluice-client', 'extendedKeyUsage=clientAuth\n');
  const keyStore = join(dir, 'broker-keystore.pem');
  await writeFile(
    keyStore,
    (await readFile(join(dir, 'broker.key'), 'utf8')) + (await readFile(join(dir, 'broker.pem'), 'utf8')),
  );
  return {
    caFile: join(dir, 'ca.pem'),
    brokerKeyStoreFile: keyStore,
    clientCertFile: join(dir, 'client.pem'),
    clientKeyFile: join(dir, 'client.key'),
  };
}
