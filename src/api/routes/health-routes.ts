import Router from '@koa/router';
import { AppError } from '../../errors.ts';
import { checkTemporal } from '../../temporal/client.ts';
import type { AppState } from '../../http/context.ts';
import type { ApiDeps } from '../../http/deps.ts';
import { ok } from '../../http/respond.ts';

interface Check {
  status: 'up' | 'down';
  latency_ms: number;
  error?: string;
}

async function probe(run: () => Promise<unknown>): Promise<Check> {
  const started = performance.now();
  try {
    await run();
    return { status: 'up', latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0]! : 'unreachable';
    return { status: 'down', latency_ms: Math.round(performance.now() - started), error: message };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/** Public: PostgreSQL and Temporal reachability; 503 in the error envelope when either is down. */
export function createHealthRouter(deps: Pick<ApiDeps, 'db' | 'temporal'>): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    const [postgres, temporal] = await Promise.all([
      probe(() => withTimeout(deps.db.raw('select 1'), 2000)),
      probe(() => checkTemporal(deps.temporal.connection, 2000)),
    ]);
    ctx.set('Cache-Control', 'no-store');
    if (postgres.status === 'down' || temporal.status === 'down') {
      const details: Record<string, string[]> = {};
      if (postgres.status === 'down') details.postgres = [`unreachable: ${postgres.error}`];
      if (temporal.status === 'down') details.temporal = [`unreachable: ${temporal.error}`];
      throw new AppError('unavailable', 'Service unavailable', details);
    }
    ok(ctx, { status: 'ok', checks: { postgres, temporal } });
  });
  return router;
}
