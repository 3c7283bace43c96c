// @sluice/analytics as users get it: `npm pack` → `npm install <tarball>` in a scratch plain-JavaScript
// project → a batch reaches a real HTTP server on 127.0.0.1, from ESM `import` and CommonJS
// `require`; the declarations type-check a TypeScript consumer.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startReceiver, type Receiver } from '@sluice/testkit';
import { ROOT } from './code-facts.ts';
import { npmEnv, packWorkspace, plainEnv, run, runAsync } from './npm-pack.ts';

const project = mkdtempSync(join(tmpdir(), 'sluice-client-project-'));
const WRITE_KEY = 'packed-client-key';
const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/client/package.json'), 'utf8')) as { version: string };
let packed: ReturnType<typeof packWorkspace>;
let ingest: Receiver;

before(async () => {
  packed = packWorkspace(join(ROOT, 'packages/client'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  // undici, the one dependency, comes from npm's cache when it has it (npm ci filled it).
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', packed.tarball], {
    cwd: project,
    env: npmEnv(),
  });
  ingest = await startReceiver({
    behaviour: () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"success":true}' }),
  });
});
after(async () => {
  await ingest?.close();
  rmSync(project, { recursive: true, force: true });
});

/** Three calls, one batch (flushAt 3), then close: the same in both module systems. */
const CALLS = `
analytics.identify({ userId: 'u-1', traits: { plan: 'pro' } });
analytics.track({ userId: 'u-1', event: 'Packed Client', properties: { from: process.env.FROM } });
analytics.page({ anonymousId: 'a-1', name: 'Home' });
`;

/** Runs `file` in the scratch project with node, and returns the one batch the server got from it. */
async function sendFrom(file: string, source: string): Promise<Record<string, unknown>> {
  writeFileSync(join(project, file), source);
  const already = ingest.requests.length;
  const env = plainEnv({ ENDPOINT: ingest.url.replace(/\/hook$/, ''), WRITE_KEY, FROM: file });
  await runAsync('node', [file], { cwd: project, env, timeoutMs: 20_000 });
  const requests = await ingest.waitFor(already + 1, 5_000);
  assert.equal(requests.length, already + 1, 'one request per run');
  const request = requests[already]!;
  assert.equal(request.method, 'POST');
  assert.equal(request.path, '/v1/batch');
  assert.equal(request.headers.authorization, `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`);
  return JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
}

function assertBatch(body: Record<string, unknown>, from: string): void {
  const batch = body.batch as Record<string, unknown>[];
  assert.deepEqual(
    batch.map((m) => m.type),
    ['identify', 'track', 'page'],
  );
  assert.deepEqual((batch[1]!.properties as Record<string, unknown>).from, from);
  for (const message of batch) {
    assert.deepEqual((message.context as { library: unknown }).library, { name: '@sluice/analytics', version });
    assert.match(message.messageId as string, /^[0-9a-f-]{36}$/);
  }
  assert.equal(typeof body.sentAt, 'string');
}

test('the packed client ships JavaScript and declarations, no TypeScript sources', () => {
  assert.ok(packed.files.includes('dist/index.js') && packed.files.includes('dist/index.d.ts'));
  assert.deepEqual(
    packed.files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
    [],
  );
  assert.deepEqual(packed.manifest.exports, { '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
  assert.deepEqual(Object.keys(packed.manifest.dependencies as object), ['undici']);
});

test('a plain ESM project (import) sends a batch to a real server', async () => {
  const source = `import { Analytics } from '@sluice/analytics';
const analytics = new Analytics(process.env.WRITE_KEY, { endpoint: process.env.ENDPOINT, flushAt: 3 });
${CALLS}
await analytics.close();
`;
  assertBatch(await sendFrom('send.mjs', source), 'send.mjs');
});

test('a CommonJS file (require) sends a batch to a real server', async () => {
  const source = `const { Analytics } = require('@sluice/analytics');
const analytics = new Analytics(process.env.WRITE_KEY, { endpoint: process.env.ENDPOINT, flushAt: 3 });
${CALLS}
analytics.close().then(() => console.log('closed'));
`;
  assertBatch(await sendFrom('send.cjs', source), 'send.cjs');
});

test('the declarations type-check a TypeScript consumer and reject a wrong option', () => {
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
    }),
  );
  writeFileSync(
    join(project, 'check.ts'),
    `import { Analytics, type DeliveryError } from '@sluice/analytics';
const analytics = new Analytics('key', { endpoint: 'http://127.0.0.1:1', onError: (err: DeliveryError) => void err.messages.length });
const messageId: string = analytics.track({ userId: 'u', event: 'Typed' });
// @ts-expect-error flushAt is a number
new Analytics('key', { flushAt: 'twenty' });
export { messageId };
`,
  );
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: project });
});
