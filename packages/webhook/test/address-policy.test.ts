import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressPolicy, urlVerdict } from '@sluice/webhook';

describe('urlVerdict', () => {
  const policy = new AddressPolicy({ enabled: true, allowCidrs: ['10.1.0.0/16'] });

  it('refuses a URL whose host is an address or a name for loopback the policy refuses', () => {
    assert.deepEqual(urlVerdict(policy, 'http://169.254.169.254/latest'), { allowed: false, range: 'linkLocal' });
    assert.deepEqual(urlVerdict(policy, 'https://[::1]:8443/'), { allowed: false, range: 'loopback' });
    assert.deepEqual(urlVerdict(policy, 'http://localhost:9000/'), { allowed: false, range: 'loopback' });
    assert.deepEqual(urlVerdict(policy, 'http://api.localhost/'), { allowed: false, range: 'loopback' });
    assert.deepEqual(urlVerdict(policy, 'not a url'), { allowed: false, range: 'invalid' });
  });

  it('allows public addresses, allow-listed ranges and host names (judged at connection), and all when off', () => {
    assert.deepEqual(urlVerdict(policy, 'https://203.0.114.9/'), { allowed: true });
    assert.deepEqual(urlVerdict(policy, 'http://10.1.2.3/'), { allowed: true });
    assert.deepEqual(urlVerdict(policy, 'https://hooks.example.com/x'), { allowed: true });
    const off = new AddressPolicy({ enabled: false, allowCidrs: [] });
    assert.deepEqual(urlVerdict(off, 'http://127.0.0.1/'), { allowed: true });
  });
});
