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
  receiverUrl: 'http://127.0.0.1:9099/webhook',
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
});

test('banner without a source says there is no write key', () => {
  const { writeKey: _w, sourceId: _s, ...rest } = info;
  assert.match(renderBanner(rest), /no source/);
  assert.doesNotMatch(renderBanner(rest), /curl/);
});
