import { describe, expect, it } from 'vitest';
import {
  matchTotp,
  newRecoveryCode,
  newTotpSecret,
  normalizeRecoveryCode,
  normalizeTotpInput,
  otpauthUri,
  recoveryCodeHash,
  totpCode,
  totpStep,
} from '../../src/auth/totp.ts';

// RFC 6238, appendix B: the SHA-1 secret is the ASCII "12345678901234567890"; the 6-digit codes are the last six
// digits of the 8-digit values it lists.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: [seconds: number, code: string][] = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
  [20000000000, '353130'],
];
const at = (seconds: number) => new Date(seconds * 1000);

describe('TOTP', () => {
  it('computes the codes of RFC 6238’s test vectors', () => {
    for (const [seconds, code] of RFC_VECTORS) expect(totpCode(RFC_SECRET, at(seconds))).toBe(code);
  });

  it('says which step a code is of, one step either way, and nothing further', () => {
    expect(totpStep(at(59))).toBe(1);
    expect(matchTotp(RFC_SECRET, '287082', at(59))).toBe(1);
    expect(matchTotp(RFC_SECRET, '287082', at(89))).toBe(1); // the server one step ahead
    expect(matchTotp(RFC_SECRET, '287082', at(30 * 0))).toBe(1); // the server one step behind
    expect(matchTotp(RFC_SECRET, '287082', at(90))).toBeUndefined();
    expect(matchTotp(RFC_SECRET, '287083', at(59))).toBeUndefined();
  });

  it('makes 160-bit secrets and the otpauth URI apps scan', () => {
    const secret = newTotpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newTotpSecret()).not.toBe(secret);
    const uri = new URL(otpauthUri(secret, 'owner@example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(decodeURIComponent(uri.pathname)).toBe('/Wathiq:owner@example.com');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      issuer: 'Wathiq',
      secret,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });

  it('reads codes typed with spaces, hyphens or Arabic digits, and nothing else', () => {
    expect(normalizeTotpInput('287 082')).toBe('287082');
    expect(normalizeTotpInput(' 287-082 ')).toBe('287082');
    expect(normalizeTotpInput('٢٨٧٠٨٢')).toBe('287082'); // Arabic-Indic
    expect(normalizeTotpInput('۲۸۷۰۸۲')).toBe('287082'); // Extended Arabic-Indic (Persian keyboards)
    for (const bad of ['28708', '2870822', '28708a', '２８７０８２', '', ' ', '1'.repeat(65), '287082\u0000'])
      expect(normalizeTotpInput(bad)).toBeUndefined();
  });
});

describe('recovery codes', () => {
  it('are 16 unambiguous characters in groups of four', () => {
    const codes = Array.from({ length: 200 }, newRecoveryCode);
    for (const code of codes) expect(code).toMatch(/^[A-HJ-NP-Z2-9]{4}(-[A-HJ-NP-Z2-9]{4}){3}$/);
    expect(new Set(codes).size).toBe(200);
  });

  it('are read in any case, with or without spaces and hyphens, and hashed in their canonical form', () => {
    const code = 'ABCD-EFGH-JKLM-NPQR';
    expect(normalizeRecoveryCode(code)).toBe('ABCDEFGHJKLMNPQR');
    expect(normalizeRecoveryCode('abcd efgh jklm npqr')).toBe('ABCDEFGHJKLMNPQR');
    expect(recoveryCodeHash(normalizeRecoveryCode('abcdefghjklmnpqr')!)).toBe(
      recoveryCodeHash(normalizeRecoveryCode(code)!),
    );
    expect(recoveryCodeHash('ABCDEFGHJKLMNPQR')).toMatch(/^[0-9a-f]{64}$/);
    for (const bad of [
      'ABCD-EFGH-JKLM-NPQ',
      'ABCD-EFGH-JKLM-NPQRS',
      'ABCD-EFGH-JKLM-NPQ0',
      'ABCD-EFGH-IKLM-NPQR',
      '',
      'ß'.repeat(8),
    ])
      expect(normalizeRecoveryCode(bad)).toBeUndefined();
  });
});
