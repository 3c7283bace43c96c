import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIGNATURE_HEADER } from '@sluice/webhook-signature';
import { DEMO_RECEIVER_HOST, DEMO_RECEIVER_PATH, DEMO_RECEIVER_PORT, MAX_BODY_BYTES } from './constants.ts';
import { checkWebhook, formatWebhookLine, type WebhookCheck } from './webhook-line.ts';

export interface DemoReceiverOptions {
  /** Listen address. Default `127.0.0.1` (use `0.0.0.0` in a container). */
  host?: string;
  /** Listen port; 0 picks a free one. Default 9099 (the demo config's endpoint). */
  port?: number;
  /** Path webhooks are posted to. Default `/webhook`. */
  path?: string;
  /** Shared secret to check `X-Signature` with; without it webhooks are reported `unsigned`. */
  secret?: string;
  /** Where each webhook's line goes. Default: stdout. */
  print?: (line: string) => void;
  /** Called with each checked webhook (tests, embedding). */
  onWebhook?: (check: WebhookCheck) => void;
}

export interface DemoReceiver {
  port: number;
  url: string;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : undefined));
    req.on('error', reject);
  });
}

/** A webhook endpoint that answers 200 and prints each webhook with its signature check. */
export async function startDemoReceiver(options: DemoReceiverOptions = {}): Promise<DemoReceiver> {
  const host = options.host ?? DEMO_RECEIVER_HOST;
  const path = options.path ?? DEMO_RECEIVER_PATH;
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if ((req.url ?? '/').split('?')[0] !== path) return void res.writeHead(404).end();
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      const body = await readBody(req).catch(() => undefined);
      if (body === undefined) return void res.writeHead(413).end();
      const signature = req.headers[SIGNATURE_HEADER.toLowerCase()];
      const check = checkWebhook(body, Array.isArray(signature) ? signature[0] : signature, options.secret);
      print(formatWebhookLine(check));
      options.onWebhook?.(check);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEMO_RECEIVER_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
