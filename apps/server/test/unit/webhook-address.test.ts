import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAddress, isPublicAddress, parseIPv6 } from '../../src/webhooks/address.ts';
import { AddressNotAllowedError, checkEndpointUrl, literalHostError, publicOnlyLookup } from '../../src/webhooks/url-policy.ts';

describe('classifyAddress', () => {
  const cases: [string, string][] = [
    // IPv4
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['192.169.0.1', 'public'],
    ['169.254.169.254', 'link_local'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['fc00::1', 'unique_local'],
    ['fd12:3456:789a::1', 'unique_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf:ffff::1', 'link_local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['3fff::1', 'public'],
    ['4000::1', 'reserved'],
    ['[::1]', 'loopback'],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['0:0:0:0:0:ffff:192.168.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    // not addresses
    ['localhost', 'invalid'],
    ['1.2.3', 'invalid'],
    ['1.2.3.256', 'invalid'],
    ['01.2.3.4', 'invalid'],
    ['1:2:3:4:5:6:7:8:9', 'invalid'],
    ['1::2::3', 'invalid'],
    ['', 'invalid'],
  ];
  for (const [ip, cls] of cases) {
    it(`${ip || '(empty)'} is ${cls}`, () => assert.equal(classifyAddress(ip), cls));
  }

  it('parses IPv6 forms to eight groups', () => {
    assert.deepEqual(parseIPv6('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('1::'), [1, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(parseIPv6('::ffff:1.2.3.4'), [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    assert.deepEqual(parseIPv6('1:2:3:4:5:6:1.2.3.4'), [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    assert.equal(parseIPv6('1:2:3:4:5:6:7'), undefined);
  });

  it('isPublicAddress is true only for public', () => {
    assert.equal(isPublicAddress('8.8.8.8'), true);
    assert.equal(isPublicAddress('::ffff:127.0.0.1'), false);
  });
});

describe('checkEndpointUrl', () => {
  const dns = (map: Record<string, string[]>) => async (h: string) => {
    if (!map[h]) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return map[h]!;
  };
  const resolver = dns({ 'hooks.example.com': ['93.184.216.34'], 'internal.example.com': ['10.1.2.3'], 'mixed.example.com': ['93.184.216.34', '127.0.0.1'] });

  it('test environment: http and loopback are fine', async () => {
    assert.deepEqual(await checkEndpointUrl('http://127.0.0.1:3000/hooks', 'test'), { ok: true, url: 'http://127.0.0.1:3000/hooks' });
    assert.equal((await checkEndpointUrl('http://localhost/x', 'test')).ok, true);
  });

  it('refuses malformed URLs and credentials everywhere', async () => {
    for (const env of ['test', 'production'] as const) {
      for (const u of ['not a url', 'ftp://example.com/x', 'https://user:pw@example.com/x', `https://example.com/${'a'.repeat(2100)}`]) {
        const r = await checkEndpointUrl(u, env, resolver);
        assert.equal(r.ok, false, u);
        assert.equal(!r.ok && r.code, 'invalid_request', u);
      }
    }
  });

  it('production: https to a public address only', async () => {
    assert.deepEqual(await checkEndpointUrl('https://hooks.example.com/tollgate', 'production', resolver), { ok: true, url: 'https://hooks.example.com/tollgate' });
    assert.equal((await checkEndpointUrl('https://93.184.216.34/x', 'production', resolver)).ok, true);
    const refused = [
      'http://hooks.example.com/tollgate',
      'https://127.0.0.1/x',
      'https://127.1/x', // WHATWG URL normalizes to 127.0.0.1
      'https://0x7f000001/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/x',
      'https://0.0.0.0/x',
      'https://[::]/x',
      'https://10.0.0.1/x',
      'https://172.16.5.5/x',
      'https://192.168.0.10/x',
      'https://localhost/x',
      'https://LOCALHOST./x',
      'https://app.localhost/x',
      'https://internal.example.com/x',
      'https://mixed.example.com/x',
      'https://nowhere.example.com/x',
    ];
    for (const u of refused) {
      const r = await checkEndpointUrl(u, 'production', resolver);
      assert.equal(r.ok, false, u);
      assert.equal(!r.ok && r.code, 'webhook_url_not_allowed', u);
    }
  });

  it('names the reason', async () => {
    const r = await checkEndpointUrl('https://internal.example.com/x', 'production', resolver);
    assert.equal(!r.ok && r.reason, 'internal.example.com resolves to 10.1.2.3 (private), not a public address');
  });
});

describe('connect-time checks', () => {
  type Addr = { address: string; family: number };
  const fakeLookup = (addrs: Addr[]) => (_h: string, _o: unknown, cb: (err: NodeJS.ErrnoException | null, a: Addr[]) => void) => cb(null, addrs);
  const call = (lookup: ReturnType<typeof publicOnlyLookup>, all: boolean) => new Promise<{ err: Error | null; res: unknown; family?: number }>((resolve) => lookup('rebind.example.com', { all } as never, (err, res, family) => resolve({ err, res, family })));

  it('hands only public addresses to connect, in both callback shapes', async () => {
    const lookup = publicOnlyLookup(
      fakeLookup([
        { address: '10.0.0.1', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ]) as never,
    );
    assert.deepEqual((await call(lookup, true)).res, [{ address: '93.184.216.34', family: 4 }]);
    const one = await call(lookup, false);
    assert.deepEqual([one.res, one.family], ['93.184.216.34', 4]);
  });

  it('refuses a name that now resolves only to private addresses (DNS rebinding)', async () => {
    const lookup = publicOnlyLookup(
      fakeLookup([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]) as never,
    );
    const { err } = await call(lookup, true);
    assert.ok(err instanceof AddressNotAllowedError);
    assert.match(err.message, /127\.0\.0\.1 \(loopback\), ::1 \(loopback\)/);
  });

  it('IP-literal URLs (which skip lookup) are checked separately in production', () => {
    assert.ok(literalHostError(new URL('https://[::ffff:10.0.0.1]/x'), 'production'));
    assert.equal(literalHostError(new URL('https://8.8.8.8/x'), 'production'), undefined);
    assert.equal(literalHostError(new URL('http://127.0.0.1/x'), 'test'), undefined);
  });
});
