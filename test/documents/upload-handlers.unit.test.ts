import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../src/http/context.ts';
import { receiveUpload } from '../../src/features/documents/upload.http.ts';
import { errorHandler } from '../../src/api/middleware/error-handler.ts';
import { requestId } from '../../src/api/middleware/request-id.ts';
import { createLogger } from '../../src/logger.ts';
import { createLocalStorage } from '../../src/storage/local-storage.ts';
import type { Storage } from '../../src/storage/storage.ts';
import { storageThrowingOnPut } from '../fakes/faulty-storage.ts';
import { makePdf } from '../helpers/pdf.ts';

/**
 * receiveUpload on its own, behind the real error middleware: whatever throws inside busboy's event handlers
 * (here the storage driver, called from the 'file' event) is that request's error envelope, and the server
 * goes on answering.
 */
let dir: string;
let server: Server;
let url: string;

function appWith(storage: Storage): Koa<AppState> {
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(requestId());
  app.use(errorHandler(createLogger({ logLevel: 'silent' })));
  app.use(async (ctx) => {
    const upload = await receiveUpload(ctx, {
      storage,
      fileKey: 'uploads/one.pdf',
      maxFileBytes: 1024 * 1024,
      plan: 'basic',
    });
    ctx.body = { success: true, data: { fields: upload.fields, size: upload.file?.size ?? null } };
  });
  return app;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-upload-handlers-'));
  const real = createLocalStorage(dir);
  const faulty = appWith(storageThrowingOnPut(real)).callback();
  const working = appWith(real).callback();
  // One server, two apps: /faulty stores through the throwing driver, anything else through the real one.
  server = createServer((req, res) => void (req.url === '/faulty' ? faulty(req, res) : working(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function upload(pathname: string): Promise<Response> {
  const form = new FormData();
  form.append('title', 'x');
  form.append('file', new Blob([await makePdf(1)], { type: 'application/pdf' }), 'a.pdf');
  return fetch(`${url}${pathname}`, { method: 'POST', body: form });
}

describe('an exception inside a busboy handler', () => {
  it('becomes the request’s 500 envelope, with no internals', async () => {
    const res = await upload('/faulty');
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await res.json()).toEqual({
      success: false,
      error: { code: 500, type: 'internal_error', message: 'Internal server error', details: {} },
    });
  });

  it('leaves the server answering, and nothing stored', async () => {
    expect((await upload('/faulty')).status).toBe(500);
    const res = await upload('/working');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { data: { fields: unknown } }).data.fields).toEqual([['title', 'x']]);
    const files = await readdir(dir, { recursive: true, withFileTypes: true });
    expect(files.filter((f) => f.isFile()).map((f) => f.name)).toEqual(['one.pdf']);
  });
});
