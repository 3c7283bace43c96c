// `sluice config validate` holds endpoint headers and the SSRF allow-list to the rules that bind
// when a webhook is sent, and reports parse errors by line and column without the line's text.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCli } from '@sluice/cli';
import { memoryIo } from './cli-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-rules-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function validate(name: string, text: string): Promise<{ code: number; out: string }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const { io, stdout, stderr } = memoryIo();
  const code = await runCli(['config', 'validate', file], io);
  return { code, out: stdout() + stderr() };
}

const withHeaders = (headers: Record<string, string>, allowCidrs: string[] = []) =>
  JSON.stringify({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [
      {
        id: 'd',
        type: 'webhooks',
        sourceIds: ['s'],
        settings: { webhooks: [{ url: 'https://hooks.example/in', headers }] },
      },
    ],
    delivery: { ssrf: { allowCidrs } },
  });

test('config validate: header names and values by RFC 9110 and what the client sends itself; as a table', async () => {
  const refused: [string, Record<string, string>, RegExp][] = [
    ['X-Message-Id reserved', { 'X-Message-Id': 'm' }, /X-Message-Id: header name is reserved/],
    ['x-signature reserved, any case', { 'x-SIGNATURE': 'a' }, /reserved/],
    ['Expect', { Expect: '100-continue' }, /Expect: header name is hop-by-hop/],
    ['Transfer-Encoding', { 'Transfer-Encoding': 'chunked' }, /hop-by-hop/],
    ['Upgrade', { Upgrade: 'websocket' }, /hop-by-hop/],
    ['Keep-Alive', { 'Keep-Alive': 'timeout=5' }, /hop-by-hop/],
    ['Connection', { Connection: 'close' }, /hop-by-hop/],
    ['TE', { TE: 'trailers' }, /hop-by-hop/],
    ['name with a space', { 'X Team': 'a' }, /not a valid HTTP token/],
    ['name with a colon', { 'X-Team:': 'a' }, /not a valid HTTP token/],
    ['CRLF in value', { 'X-Team': 'a\r\nX-Evil: 1' }, /CR, LF or NUL/],
    ['ESC in value', { 'X-Team': 'a\u001b[31m' }, /control characters \(U\+001B/],
    ['DEL in value', { 'X-Team': 'a\u007f' }, /control characters/],
    ['C1 in value', { 'X-Team': 'a\u0085' }, /control characters/],
    ['non-Latin-1 value', { 'X-Team': 'growth €' }, /Latin-1 \(U\+20AC/],
    ['leading space', { 'X-Team': ' growth' }, /white space/],
    ['same name twice', { 'X-Team': 'a', 'x-team': 'b' }, /repeated/],
  ];
  for (const [what, headers, want] of refused) {
    const { code, out } = await validate('headers.json', withHeaders(headers));
    assert.equal(code, 1, what);
    assert.match(out, want, what);
    assert.match(out, /destinations\[0\]\.settings\.webhooks\[0\]\.headers\./, what);
  }
  const accepted = {
    'X-Team': 'growth',
    Authorization: 'Bearer abc.def',
    'X-Tab': 'a\tb',
    'X-Latin': 'café',
    'X-Empty': '',
  };
  const ok = await validate('headers-ok.json', withHeaders(accepted));
  assert.equal(ok.code, 0, ok.out);
});

test('config validate: allow-list CIDRs are parsed for real', async () => {
  for (const cidr of ['10.0.0.0/40', '::1/129', 'localhost/8', '10.0.0.0', '10.0.0.0/-1', '300.0.0.0/8']) {
    const { code, out } = await validate('cidr.json', withHeaders({}, ['127.0.0.0/8', cidr]));
    assert.equal(code, 1, cidr);
    assert.match(out, /delivery\.ssrf\.allowCidrs\[1\]: not a CIDR/, cidr);
  }
  for (const cidr of ['10.0.0.0/8', '::1/128', '::ffff:127.0.0.1/104', '0.0.0.0/0']) {
    assert.equal((await validate('cidr-ok.json', withHeaders({}, [cidr]))).code, 0, cidr);
  }
});

test('config validate: endpoint URLs named in errors are redacted', async () => {
  const url = 'https://hookuser:hookpass@hooks.example/in?token=tok3n';
  const dup = JSON.stringify({
    sources: [{ id: 's', writeKeys: ['k'] }],
    destinations: [{ id: 'd', type: 'webhooks', sourceIds: ['s'], settings: { webhookUrl: url, webhooks: [{ url }] } }],
  });
  const bad = dup.replace(/"webhookUrl":"[^"]+",/, '').replace('hooks.example', 'hooks.exa mple');
  for (const text of [dup, bad]) {
    const { code, out } = await validate('url.json', text);
    assert.equal(code, 1);
    assert.doesNotMatch(out, /hookpass|tok3n/, out);
  }
});

test('config validate: a YAML or JSON parse error gives line and column, never the text of the line', async () => {
  const yaml = await validate('broken.yaml', 'sources:\n  - id: s\n    writeKeys: [sk_live_SECRET_VALUE\nfoo: : bar\n');
  assert.equal(yaml.code, 1);
  assert.match(yaml.out, /\(file\): is not valid YAML \([A-Z_]+\) at line \d+, column \d+/);
  assert.doesNotMatch(yaml.out, /SECRET_VALUE|foo/);
  const json = await validate(
    'broken.json',
    '{\n  "sources": [{ "id": "s", "writeKeys": ["sk_live_SECRET_VALUE"] }],\n  oops\n}',
  );
  assert.equal(json.code, 1);
  assert.match(json.out, /is not valid JSON( at line 3, column \d+)?/);
  assert.doesNotMatch(json.out, /SECRET_VALUE|oops/);
});
