import { request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService({ worker: false });
  account = await service.createAccount();
});
afterAll(() => service.close());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** node:http, because fetch refuses TRACE and other methods outright. */
function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${service.api.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

function envelope(answer: Answer, status: number): { message: string } {
  expect(answer.status, answer.body).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as { success: boolean; error: { code: number; message: string } };
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(status);
  return body.error;
}

const ID = '00000000-0000-4000-8000-000000000000';

describe('methods a resource does not support: 405 with Allow, in the envelope', () => {
  it('TRACE is a 405, never a 500', async () => {
    const answer = await send('TRACE', '/api/v1/health');
    expect(envelope(answer, 405).message).toBe(
      'TRACE is not allowed on /api/v1/health; allowed: GET, HEAD, OPTIONS',
    );
    expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('answers before authentication and before the body is read', async () => {
    const answer = await send('DELETE', '/api/v1/documents', { 'content-type': 'application/json' });
    envelope(answer, 405);
    expect(answer.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    const patch = await send('PATCH', `/api/v1/documents/${ID}`, { authorization: account.authorization });
    envelope(patch, 405);
    expect(patch.headers.allow).toBe('GET, HEAD, PUT, DELETE, OPTIONS');
  });

  it('names the methods of the most specific route where path templates overlap', async () => {
    // /webhooks/events is the event catalogue, not a /webhooks/{id} whose id is "events".
    const answer = await send('PUT', '/api/v1/webhooks/events', { authorization: account.authorization });
    envelope(answer, 405);
    expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('every documented path: TRACE and QUERY are 405 and Allow lists exactly its documented methods', async () => {
    const doc = (await (await service.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const paths = Object.entries(doc.paths);
    expect(paths.length).toBeGreaterThan(15);
    for (const [template, operations] of paths) {
      const path = `/api/v1${template.replace(/\{\w+\}/g, ID)}`;
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      const expected = [
        ...documented.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])),
        'OPTIONS',
      ].sort();
      for (const method of ['TRACE', 'QUERY']) {
        const answer = await send(method, path);
        envelope(answer, 405);
        expect(answer.headers.allow?.split(', ').sort(), `${method} ${template}`).toEqual(expected);
      }
      const options = await send('OPTIONS', path);
      expect(options.status, `OPTIONS ${template}`).toBe(204);
      expect(options.headers.allow?.split(', ').sort(), `OPTIONS ${template}`).toEqual(expected);
    }
  });

  it('outside the API too: the approval page and the signed files', async () => {
    for (const path of ['/a/some-token', '/files/some-token/WQT-2026-000001.pdf']) {
      const answer = await send('TRACE', path);
      envelope(answer, 405);
      expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
    }
  });

  it('the dashboard shows its own 405 page, with Allow', async () => {
    const answer = await send('TRACE', '/admin/login');
    expect(answer.status).toBe(405);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('a path no route has stays a 404, whatever the method', async () => {
    expect(envelope(await send('TRACE', '/api/v1/nope'), 404).message).toBe(
      'No route for TRACE /api/v1/nope',
    );
  });
});

describe('methods the server does not implement: 501', () => {
  it('a method outside HTTP’s own set, on any path', async () => {
    for (const path of ['/api/v1/health', '/api/v1/nope']) {
      const answer = await send('PROPFIND', path);
      expect(envelope(answer, 501).message).toBe('The PROPFIND method is not implemented by this server');
    }
  });

  it('a method name Node’s parser does not know: 501 in the envelope, connection closed', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const url = new URL(service.api.url);
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`FROBNICATE /api/v1/health HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 501 Not Implemented\r\n/);
    expect(head).toMatch(/\r\nConnection: close(\r\n|$)/);
    expect(JSON.parse(body!)).toEqual({
      success: false,
      error: {
        code: 501,
        type: 'not_implemented',
        message: 'The request method is not implemented by this server',
        details: {},
      },
    });
  });
});

describe('HEAD and OPTIONS', () => {
  it('HEAD on a GET route answers as GET would, without a body', async () => {
    const get = await send('GET', '/api/v1/documents', { authorization: account.authorization });
    const head = await send('HEAD', '/api/v1/documents', { authorization: account.authorization });
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['x-ratelimit-limit']).toBeDefined();

    const openapi = await send('HEAD', '/api/v1/openapi.json');
    expect(openapi.status).toBe(200);
    expect(openapi.body).toBe('');
    expect(openapi.headers['content-type']).toMatch(/^application\/json/);
  });

  it('HEAD keeps the GET route’s protection and errors, without a body', async () => {
    const unauthenticated = await send('HEAD', '/api/v1/documents');
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.body).toBe('');
    const missing = await send('HEAD', `/api/v1/documents/${ID}`, { authorization: account.authorization });
    expect(missing.status).toBe(404);
    expect(missing.body).toBe('');
  });

  it('OPTIONS is a 204 with Allow, without authentication', async () => {
    const answer = await send('OPTIONS', '/api/v1/webhooks');
    expect(answer.status).toBe(204);
    expect(answer.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(answer.body).toBe('');
  });
});
