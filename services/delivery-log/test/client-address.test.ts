import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { clientAddress, proxyTrust } from '../src/adapters/http/client-address.ts';

/** A request as the resolution reads it: the connection's address and the forwarded header. */
const request = (remoteAddress: string, forwarded?: string) =>
  ({
    socket: { remoteAddress },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as IncomingMessage;

describe('the client failed authentications count against (docs/reference/tokens.md, "Behind a proxy")', () => {
  const trustOf = proxyTrust();

  it('is the connection when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const none = trustOf([]);
    assert.equal(clientAddress(request('203.0.113.9', '198.51.100.1'), none), '203.0.113.9');
    assert.equal(clientAddress(request('127.0.0.1', '198.51.100.1'), none), '127.0.0.1');
  });

  it('ignores the header from a connection that is not a trusted proxy', () => {
    const trust = trustOf(['10.0.0.0/8']);
    assert.equal(clientAddress(request('203.0.113.9', '198.51.100.1'), trust), '203.0.113.9');
  });

  it('is the right-most untrusted hop behind trusted proxies; hops left of it are the client’s word', () => {
    const trust = trustOf(['10.0.0.0/8', '192.0.2.7']);
    assert.equal(clientAddress(request('10.1.2.3', '198.51.100.1'), trust), '198.51.100.1');
    // The client sent a forged hop (1.1.1.1); its own address was appended by the first proxy.
    assert.equal(clientAddress(request('10.1.2.3', '1.1.1.1, 198.51.100.1, 192.0.2.7'), trust), '198.51.100.1');
    assert.equal(clientAddress(request('10.1.2.3', ' 198.51.100.2 ,10.9.9.9'), trust), '198.51.100.2');
  });

  it('is the proxy itself when the header is absent, and the left-most hop when every hop is trusted', () => {
    const trust = trustOf(['10.0.0.0/8']);
    assert.equal(clientAddress(request('10.1.2.3'), trust), '10.1.2.3');
    assert.equal(clientAddress(request('10.1.2.3', '10.0.0.5, 10.0.0.6'), trust), '10.0.0.5');
  });

  it('matches an IPv4 proxy seen as an IPv4-mapped IPv6 connection, and IPv6 ranges', () => {
    assert.equal(clientAddress(request('::ffff:127.0.0.1', '198.51.100.1'), trustOf(['127.0.0.1'])), '198.51.100.1');
    assert.equal(clientAddress(request('fd00::1', '2001:db8::5'), trustOf(['fd00::/8'])), '2001:db8::5');
  });

  it('compiles a list once, and again when the config gives another one', () => {
    const list = ['10.0.0.0/8'];
    assert.equal(trustOf(list), trustOf(list));
    assert.notEqual(trustOf(list), trustOf(['10.0.0.0/8']));
  });
});
