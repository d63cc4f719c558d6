import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HSTS } from '../../src/http/hsts.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * TLS ends at the proxy in front of the service, so the configured PUBLIC_BASE_URL decides: https sends
 * Strict-Transport-Security on every response (the API, its errors, the approval page, files, the dashboard).
 */

const token = () => randomBytes(32).toString('base64url');

/** One request to each part of the app, successes and refusals alike. */
const PATHS = [
  '/api/v1/health',
  '/api/v1/documents', // 401 without a key
  '/api/v1/no-such-route',
  '/a/assets/approval.css',
  `/a/${token()}`, // the approval page, for a link that does not exist
  `/files/${token()}`,
  '/admin',
  '/admin/login',
];

async function headersOf(service: TestService): Promise<Record<string, string | null>> {
  const seen: Record<string, string | null> = {};
  for (const path of PATHS) {
    const res = await fetch(`${service.api.url}${path}`, { redirect: 'manual' });
    await res.arrayBuffer();
    seen[`${path} (${res.status})`] = res.headers.get('strict-transport-security');
  }
  return seen;
}

describe('Strict-Transport-Security', () => {
  let https: TestService;
  let http: TestService;
  beforeAll(async () => {
    https = await startTestService({ worker: false, env: { PUBLIC_BASE_URL: 'https://wathiq.example' } });
    http = await startTestService({ worker: false, env: { PUBLIC_BASE_URL: 'http://wathiq.example' } });
  });
  afterAll(async () => {
    await https?.close();
    await http?.close();
  });

  it('is on every response when PUBLIC_BASE_URL is https', async () => {
    const seen = await headersOf(https);
    expect(Object.keys(seen)).toHaveLength(PATHS.length);
    for (const [path, value] of Object.entries(seen)) expect(value, path).toBe(HSTS);
    expect(HSTS).toBe('max-age=31536000; includeSubDomains');
  });

  it('is on no response when PUBLIC_BASE_URL is http', async () => {
    const seen = await headersOf(http);
    for (const [path, value] of Object.entries(seen)) expect(value, path).toBeNull();
  });
});
