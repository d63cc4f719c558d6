import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, signatureLevelWarning } from '../../src/config.ts';
import { readCert } from '../../src/pdf/ltv/certificates.ts';
import { DerError } from '../../src/pdf/ltv/der.ts';
import { collectValidationData } from '../../src/pdf/ltv/extend.ts';
import {
  DEFAULT_REVOCATION_OPTIONS,
  LtvError,
  RevocationFetchError,
  fetchCrl,
  fetchOcsp,
  parseCrl,
  parseOcspResponse,
} from '../../src/pdf/ltv/revocation.ts';
import { createTestPki, selfSignedSigner } from '../helpers/pki.ts';

describe('SIGNATURE_LEVEL', () => {
  it('defaults to B-LTA with a time-stamp authority, else to B-B with a start-up warning', () => {
    const withTsa = loadConfig({ TSA_URL: 'http://tsa.example.test/' });
    expect(withTsa.signing.signatureLevel).toBe('B-LTA');
    expect(signatureLevelWarning(withTsa)).toBeUndefined();
    const without = loadConfig({});
    expect(without.signing.signatureLevel).toBe('B-B');
    expect(signatureLevelWarning(without)).toMatch(/TSA_URL is not set.*B-B/);
    // Chosen on purpose: no warning.
    expect(signatureLevelWarning(loadConfig({ SIGNATURE_LEVEL: 'B-B' }))).toBeUndefined();
  });

  it('refuses B-T, B-LT and B-LTA without TSA_URL, naming both variables', () => {
    for (const level of ['B-T', 'B-LT', 'B-LTA']) {
      expect(() => loadConfig({ SIGNATURE_LEVEL: level })).toThrow(ConfigError);
      expect(() => loadConfig({ SIGNATURE_LEVEL: level })).toThrow(/SIGNATURE_LEVEL: .*TSA_URL/);
    }
    expect(() => loadConfig({ SIGNATURE_LEVEL: 'B-XL' })).toThrow(/SIGNATURE_LEVEL/);
    expect(
      loadConfig({ SIGNATURE_LEVEL: 'B-T', TSA_URL: 'http://tsa.example.test/' }).signing.signatureLevel,
    ).toBe('B-T');
  });

  it('reads the revocation limits', () => {
    expect(loadConfig({}).signing.revocation).toEqual({
      timeoutMs: 10_000,
      retries: 2,
      maxBytes: 10_485_760,
    });
    expect(
      loadConfig({ REVOCATION_TIMEOUT_MS: '500', REVOCATION_RETRIES: '0', REVOCATION_MAX_BYTES: '2048' })
        .signing.revocation,
    ).toEqual({ timeoutMs: 500, retries: 0, maxBytes: 2048 });
    expect(() => loadConfig({ REVOCATION_RETRIES: '11' })).toThrow(/REVOCATION_RETRIES/);
  });
});

describe('revocation answers are hostile input', () => {
  const cert = readCert(selfSignedSigner('Hostile responder test').certificate);
  let server: http.Server;
  let url: string;
  let hits = 0;
  let answer: (res: http.ServerResponse) => void = (res) => res.end();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits += 1;
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('garbage, truncated or oversized DER fails with DerError, not a crash or an endless read', () => {
    for (const body of [
      Buffer.from('not DER at all'),
      Buffer.from([0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
      Buffer.from([0x30, 0x03, 0x0a, 0x01]),
      Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x00]), // successful, but no responseBytes
      Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x06]), // unauthorized
    ]) {
      expect(() => parseOcspResponse(body, cert, cert)).toThrow(DerError);
      expect(() => parseCrl(body, cert, cert)).toThrow(DerError);
    }
  });

  it('an OCSP responder that answers garbage is retried REVOCATION_RETRIES times, then RevocationFetchError', async () => {
    answer = (res) => res.writeHead(200).end('garbage');
    hits = 0;
    const err = await fetchOcsp(url, cert, cert, { timeoutMs: 2000, retries: 2, maxBytes: 1024 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RevocationFetchError);
    expect((err as Error).message).toMatch(/after 3 attempts/);
    expect(hits).toBe(3);
  });

  it('a CRL larger than REVOCATION_MAX_BYTES is not read to the end', async () => {
    answer = (res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(64 * 1024));
      res.end(Buffer.alloc(64 * 1024));
    };
    hits = 0;
    const err = await fetchCrl(url, cert, cert, { timeoutMs: 2000, retries: 0, maxBytes: 4096 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RevocationFetchError);
    expect((err as Error).message).toMatch(/REVOCATION_MAX_BYTES/);
    expect(hits).toBe(1);
  });

  it('a responder that does not answer in time fails after the time-out', async () => {
    answer = () => undefined; // never answers
    const err = await fetchOcsp(url, cert, cert, { timeoutMs: 200, retries: 0, maxBytes: 1024 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RevocationFetchError);
  });
});

describe('validation data that cannot be had', () => {
  it('a chain without revocation sources, or without its issuer, is refused for good (LtvError), not retried', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-ltv-unit-'));
    try {
      // The forge test CA names no OCSP responder and no CRL distribution point.
      const { signer } = await createTestPki(dir);
      const noSource = await collectValidationData(
        [signer.certificate, ...signer.chain],
        DEFAULT_REVOCATION_OPTIONS,
      ).catch((e: unknown) => e);
      expect(noSource).toBeInstanceOf(LtvError);
      expect(noSource).toMatchObject({ code: 'no_revocation_source' });
      expect((noSource as Error).message).toMatch(
        /Wathiq Test Document Signing.*neither an OCSP responder nor a CRL/,
      );
      const noIssuer = await collectValidationData([signer.certificate], DEFAULT_REVOCATION_OPTIONS).catch(
        (e: unknown) => e,
      );
      expect(noIssuer).toMatchObject({ name: 'LtvError', code: 'incomplete_chain' });
      // A self-signed certificate is its own trust anchor: nothing to fetch.
      const selfSigned = selfSignedSigner('Self-signed for LTV').certificate;
      expect(await collectValidationData([selfSigned], DEFAULT_REVOCATION_OPTIONS)).toEqual({
        certs: [selfSigned],
        ocsps: [],
        crls: [],
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
