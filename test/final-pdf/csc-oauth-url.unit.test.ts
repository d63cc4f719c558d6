import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenUrl } from '../../src/pdf/sign/csc-api.ts';
import { createCscSigner, type CscSignerOptions } from '../../src/pdf/sign/csc-signer.ts';
import { SignerConfigError } from '../../src/pdf/sign/signer.ts';
import { startFakeCsc, type FakeCsc } from '../fakes/csc-server.ts';
import { certDer, selfSignedIdentity } from '../helpers/pki.ts';

/**
 * The CSC signer posts its OAuth client secret only where the configuration says: SIGNING_CSC_OAUTH_TOKEN_URL, or
 * else the `oauth2` the service's /info names when that is https on the service's own origin (or, without one,
 * the service's origin). An /info naming another host, or plain http, is a SignerConfigError and nothing is sent.
 */
describe('tokenUrl', () => {
  const base = 'https://rss.example.com/csc/v2';
  it.each([
    ['https://rss.example.com', 'https://rss.example.com/oauth2/token'],
    ['https://rss.example.com/', 'https://rss.example.com/oauth2/token'],
    ['https://rss.example.com/auth', 'https://rss.example.com/auth/oauth2/token'],
    ['https://RSS.example.com:443/auth/', 'https://RSS.example.com:443/auth/oauth2/token'],
    [undefined, 'https://rss.example.com/oauth2/token'],
  ])('takes %s from /info', (oauth2, expected) => {
    expect(tokenUrl(base, oauth2, undefined)).toBe(expected);
  });

  it.each([
    'https://evil.example',
    'https://rss.example.com.evil.example',
    'https://rss.example.com:8443',
    'http://rss.example.com',
    'https://user@evil.example',
    '//evil.example',
    'not a url',
  ])('refuses %s from /info', (oauth2) => {
    expect(() => tokenUrl(base, oauth2, undefined)).toThrow(SignerConfigError);
    expect(() => tokenUrl(base, oauth2, undefined)).toThrow(/SIGNING_CSC_OAUTH_TOKEN_URL/);
  });

  it('takes the configured URL as it is, whatever /info says', () => {
    expect(tokenUrl(base, 'https://evil.example', 'http://10.0.0.5/token')).toBe('http://10.0.0.5/token');
  });
});

describe('the signer against a service whose /info names the OAuth server', () => {
  const identity = selfSignedIdentity('Wathiq CSC OAuth test');
  const secret = `secret-${randomBytes(8).toString('hex')}`;
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });

  const csc = async (oauth2?: string | null): Promise<FakeCsc> => {
    const fake = await startFakeCsc({
      key: createPrivateKey(identity.keyPem),
      certificates: [certDer(identity)],
      clientId: 'wathiq',
      clientSecret: secret,
      pin: '1234',
      ...(oauth2 !== undefined && { oauth2 }),
    });
    opened.push(fake);
    return fake;
  };
  const options = (baseUrl: string, extra: Partial<CscSignerOptions> = {}): CscSignerOptions => ({
    baseUrl,
    clientId: 'wathiq',
    clientSecret: secret,
    pin: '1234',
    timeoutMs: 5000,
    retries: 0,
    retryBackoffMs: 0,
    ...extra,
  });

  /** Another server on loopback, standing for whoever an /info answer could point at. */
  async function thief(): Promise<{ url: string; bodies: string[] }> {
    const bodies: string[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"stolen"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    opened.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
  }

  it('never sends the client secret to another host /info names', async () => {
    const other = await thief();
    const fake = await csc(other.url);
    await expect(createCscSigner(options(fake.url))).rejects.toThrow(SignerConfigError);
    await expect(createCscSigner(options(fake.url))).rejects.toThrow(/not https on the service's origin/);
    expect(other.bodies).toEqual([]);
    expect(fake.requests.map((r) => r.path)).toEqual(['/csc/v2/info', '/csc/v2/info']);
    expect(Buffer.concat(fake.requests.map((r) => r.rawBody)).includes(secret)).toBe(false);
  });

  it('nor over plain http to the service itself', async () => {
    const fake = await csc(); // /info names the fake's own http origin
    await expect(createCscSigner(options(fake.url))).rejects.toThrow(/not https/);
    expect(fake.requests.map((r) => r.path)).toEqual(['/csc/v2/info']);
  });

  it('uses SIGNING_CSC_OAUTH_TOKEN_URL when configured, and the service origin when /info names none', async () => {
    const other = await thief();
    const named = await csc(other.url);
    const configured = await createCscSigner(
      options(named.url, { oauthTokenUrl: new URL('/oauth2/token', named.url).href }),
    );
    expect(configured.kind).toBe('csc');
    expect(other.bodies).toEqual([]);
    expect(named.requests.filter((r) => r.path === '/oauth2/token').map((r) => r.status)).toEqual([200]);

    const silent = await csc(null);
    await createCscSigner(options(silent.url));
    expect(silent.requests.filter((r) => r.path === '/oauth2/token').map((r) => r.status)).toEqual([200]);
  });
});
