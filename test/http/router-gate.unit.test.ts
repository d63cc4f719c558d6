import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../src/http/context.ts';
import { underItsPrefix } from '../../src/http/router-gate.ts';

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
