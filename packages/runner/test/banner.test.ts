import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { curlLine, DEMO_TRACK_BODY, renderBanner, shellQuote } from '../src/banner.ts';

const info = {
  ingestUrl: 'http://localhost:8080',
  writeKey: "it's-a-key",
  sourceId: 'demo',
  services: [{ name: 'ingest', url: 'http://localhost:8080' }],
  brokers: '127.0.0.1:9092',
  localKafka: true,
  configPath: '/x/config/local.yaml',
  webhooks: { url: 'http://127.0.0.1:9099/webhook', receiver: 'demo' as const },
};

test('shellQuote survives a round trip through a real shell', () => {
  for (const value of ['plain', "it's", 'a b', '{"a":"$HOME"}', 'key:']) {
    assert.equal(execFileSync('bash', ['-c', `printf %s ${shellQuote(value)}`], { encoding: 'utf8' }), value);
  }
});

test('curl line: Basic auth with the write key as user name, JSON body, /v1/track', () => {
  const line = curlLine(info.ingestUrl, info.writeKey);
  const argv = JSON.parse(
    execFileSync(
      'bash',
      ['-c', `node -e 'console.log(JSON.stringify(process.argv.slice(1)))' -- ${line.slice('curl '.length)}`],
      { encoding: 'utf8' },
    ),
  ) as string[];
  assert.deepEqual(argv, [
    '-sS',
    '-u',
    "it's-a-key:",
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify(DEMO_TRACK_BODY),
    'http://localhost:8080/v1/track',
  ]);
});

test('banner names the write key, the snippets, the metrics and the receiver', () => {
  const text = renderBanner(info);
  assert.match(text, /Write key \(source "demo"\): it's-a-key/);
  assert.match(text, /new Analytics\("it's-a-key", \{ endpoint: "http:\/\/localhost:8080" \}\)/);
  assert.match(text, /analytics\.New\("it's-a-key"\)/);
  assert.match(text, /http:\/\/localhost:8080\/metrics/);
  assert.match(text, /demo receiver +http:\/\/127\.0\.0\.1:9099\/webhook/);
  assert.match(text, /local broker, stopped on exit/);
  assert.match(text, /Webhooks the demo receiver gets are printed below/);
});

test('banner names the receiver in use when it is not the demo receiver', () => {
  const ownReceiver = { url: 'http://127.0.0.1:3000/hooks', receiver: 'already-listening' as const };
  const own = renderBanner({ ...info, webhooks: ownReceiver });
  assert.match(own, /receiver +http:\/\/127\.0\.0\.1:3000\/hooks +\(your own: it was already listening/);
  assert.doesNotMatch(own, /demo receiver +http|printed below/);
  assert.match(own, /Webhooks go to http:\/\/127\.0\.0\.1:3000\/hooks; the runner does not print them/);
  const remote = renderBanner({ ...info, webhooks: { url: 'https://hooks.example.com/in', receiver: 'elsewhere' } });
  assert.match(remote, /receiver +https:\/\/hooks\.example\.com\/in +\(not on this machine/);
  assert.doesNotMatch(remote, /demo receiver +http|printed below/);
});

test('banner without a source says there is no write key', () => {
  const { writeKey: _w, sourceId: _s, ...rest } = info;
  assert.match(renderBanner(rest), /no source/);
  assert.doesNotMatch(renderBanner(rest), /curl/);
});
