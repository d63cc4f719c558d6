import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config.ts';
import { startApiServer } from '../../src/runtime/api-server.ts';
import { isLoopbackHost } from '../../src/dev-inbox/dev-inbox-routes.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Whoever opens /dev/inbox reads every approval link and can press every approver's buttons, so the inbox (and
 * the console WhatsApp provider that fills it) exists only outside production on a server listening on loopback.
 */

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ worker: false });
});
afterAll(() => service.close());

/** The app as `npm start` builds it in development, with HOST as given (the configuration check bypassed). */
function developmentConfig(host: string, env: Config['env'] = 'development'): Config {
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    DATA_DIR: service.config.dataDir,
  });
  return { ...config, env, http: { ...config.http, host } };
}

async function inboxStatus(config: Config): Promise<{ page: number; reply: number }> {
  const api = await startApiServer({ ...service.deps, config }, '127.0.0.1', 0);
  try {
    const page = await fetch(`${api.url}/dev/inbox`);
    await page.arrayBuffer();
    const reply = await fetch(`${api.url}/dev/inbox/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'message_id=1&payload=approve%3Ax',
    });
    await reply.arrayBuffer();
    return { page: page.status, reply: reply.status };
  } finally {
    await api.stop();
  }
}

describe('/dev/inbox', () => {
  it('is served in development when HOST is loopback', async () => {
    expect(loadConfig({}).http.host).toBe('127.0.0.1');
    expect((await inboxStatus(developmentConfig('127.0.0.1'))).page).toBe(200);
    expect((await inboxStatus(developmentConfig('::1'))).page).toBe(200);
  });

  it.each(['0.0.0.0', '::', '192.0.2.10'])('does not exist in development with HOST=%s', async (host) => {
    expect(await inboxStatus(developmentConfig(host))).toEqual({ page: 404, reply: 404 });
  });

  it('does not exist in production, even on loopback', async () => {
    expect(await inboxStatus(developmentConfig('127.0.0.1', 'production'))).toEqual({
      page: 404,
      reply: 404,
    });
  });

  it('answers only a loopback Host header: a page whose own name resolves to 127.0.0.1 reads nothing', async () => {
    const api = await startApiServer(
      { ...service.deps, config: developmentConfig('127.0.0.1') },
      '127.0.0.1',
      0,
    );
    const { port } = new URL(api.url);
    try {
      const statuses = async (host: string) => ({
        page: (await withHost(api.url, host, 'GET', '/dev/inbox')).status,
        reply: (await withHost(api.url, host, 'POST', '/dev/inbox/reply', 'message_id=1&payload=x')).status,
      });
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST'])
        expect((await statuses(host)).page, host).toBe(200);
      for (const host of [`rebind.example:${port}`, 'localhost.rebind.example', `127.0.0.1.nip.io:${port}`]) {
        const got = await statuses(host);
        expect(got, host).toEqual({ page: 403, reply: 403 });
        const body = (await withHost(api.url, host, 'GET', '/dev/inbox')).body;
        expect(JSON.parse(body)).toMatchObject({ success: false, error: { code: 403 } });
        expect(body).not.toContain('Development inbox');
      }
    } finally {
      await api.stop();
    }
  });

  it.each([
    ['localhost', true],
    ['localhost:3000', true],
    ['127.0.0.1', true],
    ['127.1.2.3:80', true],
    ['[::1]:3000', true],
    ['', false],
    ['localhost.', false],
    ['evil.example', false],
    ['user@localhost', false],
    ['localhost:3000@evil.example', false],
    ['127.0.0.1.evil.example', false],
    ['[::ffff:127.0.0.1]', false],
  ])('isLoopbackHost(%j) is %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });

  it('the configuration refuses the console provider on a HOST beyond loopback', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/WHATSAPP_PROVIDER: console needs a loopback HOST/);
    expect(loadConfig({ HOST: 'localhost' }).whatsapp.provider).toBe('console');
  });
});

/** A request with a Host header of our choosing (fetch always sends the URL's). */
function withHost(
  base: string,
  host: string,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${path}`,
      {
        method,
        headers: {
          host,
          ...(body !== undefined && { 'content-type': 'application/x-www-form-urlencoded' }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
