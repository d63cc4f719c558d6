import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import { z } from 'zod';
import { pingsStore } from '../../db/stores/pings-store.ts';
import { AppError } from '../../errors.ts';
import type { pingWorkflow } from '../../workflows/ping-workflow.ts';
import { authOf, type AppState } from '../../http/context.ts';
import type { ApiDeps } from '../../http/deps.ts';
import { isoTime } from '../../domain/time.ts';
import { ok } from '../../http/respond.ts';
import { parseBody } from '../../http/validation.ts';

const PingBody = z.object({ message: z.string().trim().min(1).max(255).default('ping') });

/**
 * The foundation's round trip, kept as a diagnostic: POST starts workflow `ping-<id>`, whose activity writes a
 * row in PostgreSQL; the response is the activity's result, so a 201 proves API → Temporal → worker → database.
 */
export function createPingRouter(deps: Pick<ApiDeps, 'db' | 'temporal' | 'config'>): Router<AppState> {
  const router = new Router<AppState>();

  router.post('/pings', async (ctx) => {
    const { accountId } = authOf(ctx);
    const body = parseBody(PingBody, ctx.request.body ?? {});
    const pingId = randomUUID();
    const result = await deps.temporal.client.workflow.execute<typeof pingWorkflow>('pingWorkflow', {
      taskQueue: deps.config.temporal.taskQueue,
      workflowId: `ping-${pingId}`,
      args: [{ pingId, accountId, message: body.message }],
      workflowExecutionTimeout: '30 seconds',
    });
    ok(
      ctx,
      {
        id: result.pingId,
        workflow_id: result.workflowId,
        message: result.message,
        recorded_at: isoTime(new Date(result.recordedAt)),
      },
      201,
    );
  });

  router.get('/pings/:id', async (ctx) => {
    const { accountId } = authOf(ctx);
    const id = z.uuid().safeParse(ctx.params.id);
    const ping = id.success ? await pingsStore(deps.db).findById(accountId, id.data) : undefined;
    if (!ping) throw AppError.notFound('Ping');
    ok(ctx, {
      id: ping.id,
      workflow_id: ping.workflowId,
      message: ping.message,
      recorded_at: isoTime(ping.recordedAt),
    });
  });

  return router;
}
