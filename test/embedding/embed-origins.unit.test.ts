import { describe, expect, it } from 'vitest';
import {
  checkEmbedOrigin,
  EMBED_ORIGIN_PATTERN,
  frameAncestors,
} from '../../src/features/accounts/embed-origins.ts';

describe('embed origins', () => {
  it('accepts https origins and wildcard subdomains, in canonical form', () => {
    expect(checkEmbedOrigin('HTTPS://App.Example.com:443')).toEqual({
      ok: true,
      origin: 'https://app.example.com',
    });
    expect(checkEmbedOrigin('https://*.example.co.uk:8443')).toEqual({
      ok: true,
      origin: 'https://*.example.co.uk:8443',
    });
  });

  it('refuses anything that could widen or break the CSP', () => {
    for (const hostile of [
      '',
      '*',
      "'self'",
      "'unsafe-inline'",
      'https://*',
      'https://*.com',
      'https://a.*.example.com',
      'https://app.example.com/',
      'https://app.example.com?x',
      'https://app.example.com#x',
      'https://app.example.com;script-src *',
      'https://app.example.com https://evil.example',
      'https://user@app.example.com',
      'https://app.example.com:0',
      'https://app.example.com:65536',
      'https://192.168.1.1',
      'https://[::1]',
      'https://localhost',
      'http://app.example.com',
      'data:',
      'https://app.example.com\n',
      `https://${'a'.repeat(64)}.example.com`,
    ]) {
      expect(checkEmbedOrigin(hostile).ok, JSON.stringify(hostile)).toBe(false);
      expect(new RegExp(EMBED_ORIGIN_PATTERN).test(hostile), JSON.stringify(hostile)).toBe(false);
    }
  });

  it('refuses a wildcard over a public suffix of the list, ICANN or private', () => {
    for (const origin of [
      'https://*.co.uk',
      'https://*.com.sa',
      'https://*.gov.sa',
      'https://*.github.io',
      'https://*.blogspot.com',
      'https://*.s3.amazonaws.com',
      'https://*.herokuapp.com:8443',
    ]) {
      const r = checkEmbedOrigin(origin);
      expect(r.ok, origin).toBe(false);
      expect(!r.ok && r.message, origin).toContain('a public suffix');
    }
    // A domain someone registered under such a suffix is theirs to cover, and a suffix named exactly is one host.
    for (const origin of [
      'https://*.acme.co.uk',
      'https://*.acme.github.io',
      'https://github.io',
      'https://*.example.internal',
    ])
      expect(checkEmbedOrigin(origin).ok, origin).toBe(true);
    // One stored before its suffix was listed never reaches the header.
    expect(frameAncestors(['https://*.github.io', 'https://app.example.com'])).toBe(
      'https://app.example.com',
    );
  });

  it("is 'none' without origins, and drops anything unchecked that reached the list", () => {
    expect(frameAncestors([])).toBe("'none'");
    expect(
      frameAncestors(['https://a.example.com', "https://b.example.com; script-src 'unsafe-inline'"]),
    ).toBe('https://a.example.com');
    expect(frameAncestors(['*'])).toBe("'none'");
  });
});
