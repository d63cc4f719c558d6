import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { startApiServer, type RunningApi } from '../../src/runtime/api-server.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

/**
 * The app as it runs, with our own logger writing into an array: each request leaves a line with its request id
 * (the one the response echoes), the document when its path names one, and no path token anywhere.
 */

const lines: string[] = [];
const entries = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
const requestLine = (id: string | null) =>
  entries().find((e) => e.msg === 'request' && e.request_id === id && id !== null);

let service: TestService;
let api: RunningApi;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  account = await service.createAccount();
  const logger = createLogger({ logLevel: 'info' }, {}, { write: (s: string) => void lines.push(s.trim()) });
  api = await startApiServer({ ...service.deps, logger }, '127.0.0.1', 0);
});
afterAll(async () => {
  await api?.stop();
  await service?.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${path}`, { headers });
  await res.arrayBuffer();
  return res;
}

describe('request logs', () => {
  it('carry the request id the response echoes, and no /a/ or /files/ token', async () => {
    const token = randomBytes(32).toString('base64url');
    const page = await get(`/a/${token}`);
    const file = await get(`/files/${token}/WQT-2026-000001.pdf`);
    const pdf = await get(`/a/${token}/document.pdf?download=1`);
    for (const [res, path] of [
      [page, '/a/[redacted]'],
      [file, '/files/[redacted]/WQT-2026-000001.pdf'],
      [pdf, '/a/[redacted]/document.pdf?download=1'],
    ] as const) {
      const id = res.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(requestLine(id), path).toMatchObject({ method: 'GET', url: path, status: res.status });
    }
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.join('\n')).not.toContain(token);
  });

  it('keep a sane X-Request-Id from the caller and replace one that is not', async () => {
    const kept = await get('/api/v1/health', { 'x-request-id': 'caller-trace.42' });
    expect(kept.headers.get('x-request-id')).toBe('caller-trace.42');
    expect(requestLine('caller-trace.42')).toMatchObject({ url: '/api/v1/health' });

    const bad = 'x'.repeat(200);
    const replaced = await get('/api/v1/health', { 'x-request-id': bad });
    const id = replaced.headers.get('x-request-id');
    expect(id).not.toBe(bad);
    expect(requestLine(id)).toMatchObject({ url: '/api/v1/health' });
    expect(lines.join('\n')).not.toContain(bad);
  });

  it('carry the document a path names', async () => {
    const documentId = randomUUID();
    const res = await get(`/api/v1/documents/${documentId}`, { authorization: account.authorization });
    expect(res.status).toBe(404);
    expect(requestLine(res.headers.get('x-request-id'))).toMatchObject({
      document_id: documentId,
      status: 404,
    });
  });
});
