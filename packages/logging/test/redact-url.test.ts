import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactUrl, redactUrlsIn } from '../src/index.ts';

test('redactUrl: userinfo and query replaced, fragment dropped, the rest kept; as a table', () => {
  const table: [string, string][] = [
    ['https://user:pw@hooks.example.com:8443/a/b?token=s3cret&x=1#frag', 'https://***@hooks.example.com:8443/a/b?***'],
    ['https://hooks.example.com/a', 'https://hooks.example.com/a'],
    ['http://only-user@h.example/p', 'http://***@h.example/p'],
    ['https://token@hooks.example.com/', 'https://***@hooks.example.com/'],
    ['http://127.0.0.1:8080/a/b?x=1&y=2', 'http://127.0.0.1:8080/a/b?***'],
    ['https://h.example/p?', 'https://h.example/p'],
    ['not a url?token=x', 'not a url?***'],
    ['not a url with secret', 'not a url with secret'],
    ['weird//a:b@c/d?x#y', 'weird//***@c/d?***'],
    ['user:pass@host.example/x?t=1', '***@host.example/x?***'],
  ];
  for (const [url, want] of table) assert.equal(redactUrl(url), want, url);
});

test('redactUrl is idempotent: a redacted URL redacts to itself', () => {
  for (const url of ['https://u:p@h.example/x?t=1', 'https://h.example/x', 'user:pass@h/x?t']) {
    const once = redactUrl(url);
    assert.equal(redactUrl(once), once, url);
  }
});

test('redactUrlsIn: every URL of an error text, separators kept', () => {
  assert.equal(
    redactUrlsIn('https://a:b@x.io/h?t=1: http_500; https://y.io/z: timeout'),
    'https://***@x.io/h?***: http_500; https://y.io/z: timeout',
  );
  assert.equal(redactUrlsIn('http_503'), 'http_503');
});
