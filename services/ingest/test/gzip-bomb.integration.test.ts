import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createGzip } from 'node:zlib';
import { basic, ingestConfig, post, startIngest, WRITE_KEY, type RunningIngest } from './helpers.ts';

/** About 1 MB of gzip that inflates to 1 GB of JSON-ish whitespace, built without holding 1 GB. */
async function gzipBomb(): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gzip.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  const block = Buffer.alloc(1 << 20, 0x20);
  gzip.write('{"batch":[');
  for (let i = 0; i < 1024; i++) if (!gzip.write(block)) await new Promise((r) => gzip.once('drain', r));
  gzip.end(']}');
  await done;
  return Buffer.concat(out);
}

let ingest: RunningIngest;
before(async () => {
  ingest = await startIngest(ingestConfig());
});
after(() => ingest.service.close());

test('a 1 MB gzip body that would inflate to 1 GB is refused with bounded memory', async (t) => {
  const bomb = await gzipBomb();
  assert.ok(bomb.length > 900_000 && bomb.length < 1_200_000, `bomb is ${bomb.length} bytes`);
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1);
  try {
    for (let i = 0; i < 3; i++) {
      const res = await post(`${ingest.url}/v1/batch`, bomb, {
        authorization: basic(WRITE_KEY),
        'content-encoding': 'gzip',
      });
      assert.equal(res.status, 400);
      assert.equal(res.json.code, 'body_too_large');
    }
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  const growthMb = (peak - baseline) / 1e6;
  t.diagnostic(`bomb ${bomb.length} bytes; peak RSS growth ${growthMb.toFixed(1)} MB`);
  assert.ok(growthMb < 50, `peak RSS grew by ${growthMb.toFixed(1)} MB`);
  // Still serving normally afterwards.
  const ok = await post(
    `${ingest.url}/v1/track`,
    { userId: 'u', event: 'after-bomb' },
    { authorization: basic(WRITE_KEY) },
  );
  assert.equal(ok.status, 200);
});
