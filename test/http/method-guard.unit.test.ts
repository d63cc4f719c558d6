import Router from '@koa/router';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import type { AppState } from '../../src/http/context.ts';
import { allowedMethods, methodGuard } from '../../src/http/methods.ts';

/** Runs the guard on one request; answers what it did: passed it on, answered it, or refused it. */
async function guard(routers: Router<AppState>[], method: string, path: string) {
  const headers: Record<string, string> = {};
  const ctx = {
    method,
    path,
    status: 404,
    set: (name: string, value: string) => {
      headers[name] = value;
    },
  } as unknown as Parameters<ReturnType<typeof methodGuard>>[0];
  let passed = false;
  try {
    await methodGuard(routers)(ctx, () => {
      passed = true;
      return Promise.resolve();
    });
  } catch (err) {
    if (err instanceof AppError) return { refused: err.status, allow: err.headers?.Allow };
    throw err;
  }
  return passed ? { passed } : { answered: ctx.status, allow: headers.Allow };
}

describe('the method guard', () => {
  const documents = () => {
    const router = new Router<AppState>({ prefix: '/api/v1' });
    router.use((_ctx, next) => next()); // middleware layers are no route
    router.get('/documents/:id', () => undefined);
    router.put('/documents/:id', () => undefined);
    router.get('/webhooks/events', () => undefined);
    router.delete('/webhooks/:id', () => undefined);
    return router;
  };

  it('passes a method the path has, refuses another with 405 and Allow, answers OPTIONS, lets unknown paths by', async () => {
    const routers = [documents()];
    expect(await guard(routers, 'GET', '/api/v1/documents/abc')).toEqual({ passed: true });
    expect(await guard(routers, 'POST', '/api/v1/documents/abc')).toEqual({
      refused: 405,
      allow: 'GET, HEAD, PUT, OPTIONS',
    });
    expect(await guard(routers, 'OPTIONS', '/api/v1/documents/abc')).toEqual({
      answered: 204,
      allow: 'GET, HEAD, PUT, OPTIONS',
    });
    // The most specific template wins: the event catalogue is GET only.
    expect(await guard(routers, 'DELETE', '/api/v1/webhooks/events')).toMatchObject({ refused: 405 });
    expect(await guard(routers, 'DELETE', '/api/v1/webhooks/w1')).toEqual({ passed: true });
    // HEAD comes with GET; TRACE and QUERY are methods HTTP defines that no route takes.
    expect(await guard(routers, 'HEAD', '/api/v1/webhooks/events')).toEqual({ passed: true });
    expect(await guard(routers, 'TRACE', '/api/v1/documents/abc')).toEqual({
      refused: 405,
      allow: 'GET, HEAD, PUT, OPTIONS',
    });
    expect(await guard(routers, 'QUERY', '/api/v1/webhooks/w1')).toEqual({
      refused: 405,
      allow: 'DELETE, OPTIONS',
    });
    expect(await guard(routers, 'PATCH', '/nowhere')).toEqual({ passed: true });
    expect(await guard(routers, 'PROPFIND', '/api/v1/documents/abc')).toMatchObject({ refused: 501 });
    // The same answer the dashboard's error page reads.
    expect(allowedMethods(routers, '/api/v1/documents/abc')).toEqual(['GET', 'HEAD', 'PUT', 'OPTIONS']);
  });

  it("tests the routes' paths itself, never through the routers' per-request match", async () => {
    const router = documents();
    let matches = 0;
    const match = router.match.bind(router);
    router.match = (path: string, method: string) => {
      matches++;
      return match(path, method);
    };
    const guarded = methodGuard([router]);
    const ctx = { method: 'GET', path: '/api/v1/documents/abc' } as Parameters<typeof guarded>[0];
    for (let i = 0; i < 3; i++) await guarded(ctx, () => Promise.resolve());
    expect(matches).toBe(0);
  });

  it('sees a route added after it was built', async () => {
    const router = documents();
    const routers = [router];
    expect(await guard(routers, 'POST', '/api/v1/documents/abc/send')).toEqual({ passed: true });
    const guarded = methodGuard(routers);
    const ctx = {
      method: 'DELETE',
      path: '/api/v1/documents/abc/send',
      set: () => undefined,
    } as unknown as Parameters<typeof guarded>[0];
    await guarded(ctx, () => Promise.resolve()); // no route there yet: passed on
    router.post('/documents/:id/send', () => undefined);
    await expect(guarded(ctx, () => Promise.resolve())).rejects.toMatchObject({ status: 405 });
  });
});
