import Router from '@koa/router';
import { AppError } from '../../errors.ts';
import { checkTemporal } from '../../temporal/client.ts';
import type { AppState } from '../../http/context.ts';
import type { ApiDeps } from '../../http/deps.ts';
import { ok } from '../../http/respond.ts';

type Dependency = 'postgres' | 'temporal';

interface Check {
  status: 'up' | 'down';
  latency_ms: number;
}

interface Probed {
  check: Check;
  /** What went wrong, for the log only: driver messages name hosts, ports and users. */
  err?: unknown;
}

async function probe(run: () => Promise<unknown>): Promise<Probed> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    await run();
    return { check: { status: 'up', latency_ms: latency() } };
  } catch (err) {
    return { check: { status: 'down', latency_ms: latency() }, err };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * Public: PostgreSQL and Temporal reachability, each `up` or `down`; 503 in the error envelope when either is
 * down. The public answer never carries a driver's error text (it names hosts, ports and users): the log has it,
 * under the response's request id.
 */
export function createHealthRouter(deps: Pick<ApiDeps, 'db' | 'temporal' | 'logger'>): Router<AppState> {
  const router = new Router<AppState>();
  router.get('/health', async (ctx) => {
    const [postgres, temporal] = await Promise.all([
      probe(() => withTimeout(deps.db.raw('select 1'), 2000)),
      probe(() => checkTemporal(deps.temporal.connection, 2000)),
    ]);
    ctx.set('Cache-Control', 'no-store');
    const probed: Record<Dependency, Probed> = { postgres, temporal };
    const details: Record<string, string[]> = {};
    for (const [dependency, { check, err }] of Object.entries(probed)) {
      if (check.status === 'up') continue;
      details[dependency] = ['down'];
      deps.logger.warn(
        { err, dependency, latencyMs: check.latency_ms, requestId: ctx.state.requestId },
        'health check: dependency down',
      );
    }
    if (Object.keys(details).length > 0)
      throw new AppError('service_unavailable', 'Service unavailable', details);
    ok(ctx, { status: 'ok', checks: { postgres: postgres.check, temporal: temporal.check } });
  });
  return router;
}
