import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../src/http/context.ts';
import { underItsPrefix, whereItsRoutesAre } from '../../src/http/router-gate.ts';

/** A router whose `match` counts its calls: a router the gate skips is never asked. */
function countingRouter(prefix: string | undefined, answer: string) {
  const router = new Router<AppState>(prefix ? { prefix } : {});
  router.get('/items/:id', (ctx) => {
    ctx.body = `${answer} ${ctx.params.id}`;
  });
  router.get('/', (ctx) => {
    ctx.body = `${answer} root`;
  });
  let matches = 0;
  const match = router.match.bind(router);
  router.match = (path, method) => {
    matches++;
    return match(path, method);
  };
  return { router, matches: () => matches };
}

describe('routers gated by their prefix', () => {
  const pages = countingRouter('/a', 'page');
  const api = countingRouter('/api/v1.0', 'api');
  const anywhere = countingRouter(undefined, 'anywhere');
  let base = '';
  let close = () => undefined as unknown;

  beforeAll(async () => {
    const app = new Koa<AppState>();
    app.use(underItsPrefix(pages.router));
    app.use(underItsPrefix(api.router));
    app.use(underItsPrefix(anywhere.router));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  const get = async (path: string) => {
    const res = await fetch(base + path);
    return `${res.status} ${await res.text()}`;
  };

  it('answers under each prefix as the router alone would, in any case and with or without the last slash', async () => {
    expect(await get('/a/items/7')).toBe('200 page 7');
    expect(await get('/A/ITEMS/8')).toBe('200 page 8');
    expect(await get('/a')).toBe('200 page root');
    expect(await get('/a/')).toBe('200 page root');
    expect(await get('/a/items/')).toBe('404 Not Found');
    expect(await get('/api/v1.0/items/9')).toBe('200 api 9');
    expect(await get('/items/10')).toBe('200 anywhere 10');
  });

  it('never asks a router whose prefix the path lacks', async () => {
    const before = { pages: pages.matches(), api: api.matches(), anywhere: anywhere.matches() };
    expect(await get('/api/v1.0/items/1')).toBe('200 api 1');
    // The prefix is text, not a pattern: the dot matches only a dot.
    expect(await get('/api/v1x0/items/1')).toBe('404 Not Found');
    expect(await get('/%2Fa/items/1')).toBe('404 Not Found');
    // `/a` is a whole segment: `/ab…` is not under it.
    expect(await get('/ab/items/1')).toBe('404 Not Found');
    expect(await get('/__proto__/items/1')).toBe('404 Not Found');
    expect(pages.matches()).toBe(before.pages);
    expect(api.matches()).toBe(before.api + 1);
    // A router without a prefix is asked about every path.
    expect(anywhere.matches()).toBe(before.anywhere + 4);
  });
});

describe('routers sharing a prefix, gated by their routes', () => {
  /** Two features under one prefix, each behind the same middleware, which records what it saw. */
  const seen: string[] = [];
  const guard = async (ctx: Koa.Context, next: Koa.Next) => {
    seen.push(`${ctx.method} ${ctx.path}`);
    await next();
  };
  const feature = (name: string, build: (router: Router<AppState>) => void) => {
    const inner = new Router<AppState>();
    build(inner);
    const router = new Router<AppState>({ prefix: '/api' });
    router.use(guard);
    router.use(inner.routes());
    let matches = 0;
    const match = router.match.bind(router);
    router.match = (path, method) => {
      matches++;
      return match(path, method);
    };
    return { router, name, matches: () => matches };
  };
  const documents = feature('documents', (r) => {
    r.get('/documents/:id', (ctx) => {
      ctx.body = `document ${ctx.params.id}`;
    });
  });
  const shared = feature('shared', (r) => {
    // A path another feature also has, with another method.
    r.post('/documents/:id', (ctx) => {
      ctx.body = `posted ${ctx.params.id}`;
    });
    r.get('/webhooks', (ctx) => {
      ctx.body = 'webhooks';
    });
  });
  let base = '';
  let close = () => undefined as unknown;

  beforeAll(async () => {
    const app = new Koa<AppState>();
    app.use(whereItsRoutesAre(documents.router));
    app.use(whereItsRoutesAre(shared.router));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  const call = async (method: string, path: string) => {
    const res = await fetch(base + path, { method });
    return `${res.status} ${await res.text()}`;
  };

  it('asks only the routers with a route at the path, and runs their middleware once for the route that answers', async () => {
    seen.length = 0;
    const before = { documents: documents.matches(), shared: shared.matches() };
    expect(await call('GET', '/api/webhooks')).toBe('200 webhooks');
    expect(documents.matches()).toBe(before.documents);
    expect(shared.matches()).toBe(before.shared + 1);
    expect(await call('GET', '/api/documents/7')).toBe('200 document 7');
    // The other router has the path with another method: it is asked, finds no route for GET, and runs nothing.
    expect(shared.matches()).toBe(before.shared + 1);
    expect(documents.matches()).toBe(before.documents + 1);
    expect(await call('POST', '/api/documents/8')).toBe('200 posted 8');
    expect(documents.matches()).toBe(before.documents + 2);
    expect(shared.matches()).toBe(before.shared + 2);
    expect(seen).toEqual(['GET /api/webhooks', 'GET /api/documents/7', 'POST /api/documents/8']);
  });

  it('falls through to what follows on a path no route has, prefix or not, without running the middleware', async () => {
    seen.length = 0;
    const before = { documents: documents.matches(), shared: shared.matches() };
    expect(await call('GET', '/api/unknown')).toBe('404 Not Found');
    expect(await call('GET', '/api/documents')).toBe('404 Not Found');
    expect(await call('GET', '/api/__proto__')).toBe('404 Not Found');
    expect(await call('GET', '/elsewhere/documents/1')).toBe('404 Not Found');
    expect(documents.matches()).toBe(before.documents);
    expect(shared.matches()).toBe(before.shared);
    expect(seen).toEqual([]);
  });

  it('sees routes added after the gate was built', async () => {
    documents.router.get('/late', (ctx) => {
      ctx.body = 'late';
    });
    expect(await call('GET', '/api/late')).toBe('200 late');
  });
});
