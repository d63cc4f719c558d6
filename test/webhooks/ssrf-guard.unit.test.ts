import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import {
  assertWebhookUrl,
  forbiddenAddressReason,
  isForbiddenAddress,
} from '../../src/features/webhooks/ssrf-guard.ts';

/** A resolver over a fixed table: there is no internet in the tests, and the guard must not need one. */
function resolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = (host: string) => {
    asked.push(host);
    const found = table[host];
    return found
      ? Promise.resolve(found)
      : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  };
  return { resolve, asked };
}

async function refusal(url: string, resolve = resolver({}).resolve): Promise<AppError> {
  const err = await assertWebhookUrl(url, { resolve }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, url).toBeInstanceOf(AppError);
  const appError = err as AppError;
  expect(appError.status).toBe(422);
  expect(Object.keys(appError.details)).toEqual(['url']);
  return appError;
}

describe('isForbiddenAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'IETF'],
    ['198.18.0.1', 'benchmarking'],
    ['168.63.129.16', 'metadata'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['FEBF::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::FFFF:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:100.64.0.1', 'IPv4-mapped carrier-grade NAT'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'IPv4-mapped private'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['not-an-ip', 'not an IP'],
  ])('%s is forbidden (%s)', (ip, why) => {
    expect(isForbiddenAddress(ip)).toBe(true);
    expect(forbiddenAddressReason(ip)).toContain(why);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '169.253.255.255',
    '11.0.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (ip) => {
    expect(forbiddenAddressReason(ip)).toBeUndefined();
  });
});

describe('assertWebhookUrl', () => {
  it.each([
    'http://127.0.0.1/hook',
    'http://127.0.0.1:8080/hook',
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/',
    'http://[fc00::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://100.64.0.1/',
    'https://0.0.0.0/',
    'http://[::]/',
    'http://[fe80::1]/',
  ])('refuses the address literal %s', async (url) => {
    const err = await refusal(url);
    expect(err.details.url?.[0]).toMatch(/is not a public address/);
  });

  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0xA9.0xFE.0xA9.0xFE/', '169.254.169.254'],
    ['http://167772161/', '10.0.0.1'],
  ])('catches the numeric spelling %s (WHATWG URL normalises it to %s)', async (url, normalised) => {
    const err = await refusal(url);
    expect(err.details.url?.[0]).toContain(normalised);
  });

  it('refuses a name that resolves to loopback, and a name with any one forbidden address', async () => {
    const dns = resolver({
      'hooks.evil.example': ['127.0.0.1'],
      'mixed.example': ['93.184.215.14', '10.1.2.3'],
      'v6.example': ['2606:4700:4700::1111', '::1'],
    });
    const loop = await refusal('https://hooks.evil.example/wathiq', dns.resolve);
    expect(loop.details.url?.[0]).toBe(
      'host hooks.evil.example resolves to an address that is not public (loopback); webhooks must reach the internet',
    );
    expect((await refusal('https://mixed.example/', dns.resolve)).details.url?.[0]).not.toContain('10.1.2.3');
    await refusal('https://v6.example/', dns.resolve);
    expect(dns.asked).toEqual(['hooks.evil.example', 'mixed.example', 'v6.example']);
  });

  it('refuses localhost names without asking DNS, and names that do not resolve', async () => {
    const dns = resolver({});
    await refusal('http://localhost:3000/', dns.resolve);
    await refusal('http://api.localhost/', dns.resolve);
    await refusal('http://LOCALHOST./', dns.resolve);
    expect(dns.asked).toEqual([]);
    const err = await refusal('https://nowhere.example/', dns.resolve);
    expect(err.details.url?.[0]).toBe('host nowhere.example could not be resolved');
  });

  it.each([
    ['ftp://files.example.com/hook', /http:\/\/ or https:\/\//],
    ['file:///etc/passwd', /http:\/\/ or https:\/\//],
    ['gopher://example.com/', /http:\/\/ or https:\/\//],
    ['javascript:alert(1)', /http:\/\/ or https:\/\//],
    ['https://user:pass@hooks.example.com/', /user name or password/],
    ['https://user@hooks.example.com/', /user name or password/],
    ['not a url', /absolute http/],
    ['/relative/path', /absolute http/],
    [`https://hooks.example.com/${'a'.repeat(2100)}`, /at most 2048/],
  ])('refuses %s', async (url, message) => {
    const err = await refusal(url, resolver({ 'hooks.example.com': ['93.184.215.14'] }).resolve);
    expect(err.details.url?.[0]).toMatch(message);
  });

  it('accepts public addresses and names that resolve only to public addresses', async () => {
    const dns = resolver({
      'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    });
    const url = await assertWebhookUrl('https://hooks.example.com/wathiq?x=1', { resolve: dns.resolve });
    expect(url.href).toBe('https://hooks.example.com/wathiq?x=1');
    await expect(assertWebhookUrl('http://8.8.8.8:8080/', { resolve: dns.resolve })).resolves.toBeInstanceOf(
      URL,
    );
    await expect(
      assertWebhookUrl('https://[2606:4700:4700::1111]/', { resolve: dns.resolve }),
    ).resolves.toBeInstanceOf(URL);
    expect(dns.asked).toEqual(['hooks.example.com']);
  });

  it('allowPrivate lifts the address checks but never the scheme or credential rules', async () => {
    const dns = resolver({});
    await expect(
      assertWebhookUrl('http://127.0.0.1:9999/', { allowPrivate: true, resolve: dns.resolve }),
    ).resolves.toBeInstanceOf(URL);
    await expect(
      assertWebhookUrl('http://localhost/', { allowPrivate: true, resolve: dns.resolve }),
    ).resolves.toBeInstanceOf(URL);
    await expect(assertWebhookUrl('ftp://127.0.0.1/', { allowPrivate: true })).rejects.toBeInstanceOf(
      AppError,
    );
    await expect(assertWebhookUrl('http://a:b@127.0.0.1/', { allowPrivate: true })).rejects.toBeInstanceOf(
      AppError,
    );
    expect(dns.asked).toEqual([]);
  });
});
