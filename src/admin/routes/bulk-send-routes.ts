import type Router from '@koa/router';
import { isAppError, mergeDetails } from '../../errors.ts';
import { readCsvForm } from '../../features/bulk-sends/bulk-send-body.http.ts';
import {
  bulkSendResultsCsv,
  findBulkSendView,
  recentBulkSends,
} from '../../features/bulk-sends/bulk-send-views.ts';
import { cancelBulkSend } from '../../features/bulk-sends/cancel-bulk-send.ts';
import { createBulkSendClient, type BulkSendClient } from '../../features/bulk-sends/client.ts';
import { checkBulkSend, createBulkSend } from '../../features/bulk-sends/create-bulk-send.ts';
import { listTemplates, loadTemplate } from '../../features/templates/template-service.ts';
import type { AdminContext, AdminDeps, AdminState } from '../context.ts';
import { CSRF_FIELD, csrfProtection, isSameOriginRequest } from '../csrf.ts';
import { AdminPageError } from '../errors.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { isUuid, renderPage, seeOther } from '../render.ts';
import { requireSession, sessionTokenMatches } from '../sessions.ts';
import { bulkSendPage, checkResults, type CheckOutcome } from '../views/bulk-send-page.ts';
import { bulkSendProgressPage } from '../views/bulk-send-progress-page.ts';
import { pageContextOf } from '../views/page.ts';
import { templatesPage } from '../views/templates-page.ts';

const SHOWN = 50;

const accountOf = (ctx: AdminContext) => ctx.state.session!.accountId;
const idOf = (ctx: AdminContext) => (ctx.params as Record<string, string | undefined>).id;

/** The bulk sends' client: the dashboard may be built without Temporal, and then cannot start or cancel one. */
function bulkSendsOf(deps: AdminDeps): () => BulkSendClient {
  return () => {
    if (!deps.temporal) throw new Error('the dashboard was built without a Temporal client');
    const temporal = deps.temporal;
    return createBulkSendClient({
      client: () => temporal.client,
      taskQueue: deps.config.temporal.taskQueue,
      settings: deps.config.bulkSends,
    });
  };
}

/** The template named in the path, usable for a bulk send; any other is a not-found page. */
async function templateOf(ctx: AdminContext, deps: AdminDeps) {
  const id = idOf(ctx);
  if (!isUuid(id)) throw AdminPageError.notFound();
  return loadTemplate(deps.db, { accountId: accountOf(ctx), id, usable: true }).catch((err: unknown) => {
    if (isAppError(err) && (err.status === 404 || err.status === 409)) throw AdminPageError.notFound();
    throw err;
  });
}

/** The account's bulk send named in the path; any other is a not-found page. */
async function bulkOf(ctx: AdminContext, deps: AdminDeps) {
  const id = idOf(ctx);
  if (!isUuid(id)) throw AdminPageError.notFound();
  const found = await findBulkSendView(deps.db, accountOf(ctx), id);
  if (!found) throw AdminPageError.notFound();
  return found;
}

/**
 * /admin/templates and the bulk-send pages: a CSV uploaded and checked row by row before anything is sent (the
 * script swaps the findings in place; without it the page answers the post), the send started, its progress
 * (the script polls /progress), the results as CSV, and cancel.
 */
export function mountBulkSendRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  const bulkSends = bulkSendsOf(deps);
  router.get(ADMIN_PATHS.templates, requireSession(), async (ctx) => {
    const [templates, recent] = await Promise.all([
      listTemplates(deps.db, accountOf(ctx), { archived: false, limit: SHOWN, offset: 0 }),
      recentBulkSends(deps.db, accountOf(ctx), 10),
    ]);
    renderPage(
      ctx,
      200,
      templatesPage(pageContextOf(ctx), { templates: templates.items, bulkSends: recent }),
    );
  });

  router.get('/admin/templates/:id/bulk-send', requireSession(), async (ctx) => {
    renderPage(ctx, 200, bulkSendPage(pageContextOf(ctx), await templateOf(ctx, deps), undefined));
  });

  router.post('/admin/templates/:id/bulk-send', requireSession(), (ctx) => checkOrSend(ctx, deps, bulkSends));

  router.get('/admin/bulk-sends/:id', requireSession(), async (ctx) => {
    renderPage(ctx, 200, bulkSendProgressPage(pageContextOf(ctx), (await bulkOf(ctx, deps)).view));
  });

  router.get('/admin/bulk-sends/:id/progress', requireSession(), async (ctx) => {
    const { view } = await bulkOf(ctx, deps);
    ctx.type = 'application/json';
    ctx.body = { status: view.status, counts: view.counts, resumes_at: view.resumes_at };
  });

  router.get('/admin/bulk-sends/:id/results.csv', requireSession(), async (ctx) => {
    const { bulk } = await bulkOf(ctx, deps);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="bulk-send-${bulk.id}.csv"`);
    ctx.body = await bulkSendResultsCsv(deps.db, bulk);
  });

  router.post('/admin/bulk-sends/:id/cancel', requireSession(), csrfProtection(deps.config), async (ctx) => {
    const { bulk } = await bulkOf(ctx, deps);
    await cancelBulkSend(
      { db: deps.db, bulkSends: bulkSends(), logger: deps.logger },
      { accountId: accountOf(ctx), id: bulk.id },
    ).catch((err: unknown) => {
      // Finished meanwhile: the page shows how it ended.
      if (!(isAppError(err) && err.status === 409)) throw err;
    });
    seeOther(ctx, ADMIN_PATHS.bulkSend(bulk.id));
  });
}

/** The uploaded CSV checked row by row; with intent=send and nothing in the way, the bulk send started. */
async function checkOrSend(
  ctx: AdminContext,
  deps: AdminDeps,
  bulkSends: () => BulkSendClient,
): Promise<void> {
  const settings = deps.config.bulkSends;
  // A cross-site post is refused before its file is read; the token is one of the multipart parts.
  if (!isSameOriginRequest(ctx, deps.config)) throw AdminPageError.csrf();
  const found = await templateOf(ctx, deps);
  const form = await readCsvForm(ctx, settings.maxBytes, ['skip_invalid', 'intent', CSRF_FIELD]);
  if (!sessionTokenMatches(ctx, form.fields.get(CSRF_FIELD))) throw AdminPageError.csrf();
  const input = { accountId: accountOf(ctx), templateId: found.template.id, source: form.source };
  const skipInvalid = form.fields.get('skip_invalid') === 'true';
  const sending = form.fields.get('intent') === 'send';
  const checked = await checkBulkSend({ db: deps.db, settings }, input);
  const outcome: CheckOutcome = {
    rows: checked.valid.length + checked.invalid.length,
    invalid: checked.invalid.length,
    details: mergeDetails(form.details, checked.details),
  };
  const otherProblems = Object.keys(outcome.details).some((k) => !k.startsWith('rows.'));
  const blocked = otherProblems || checked.valid.length === 0 || (outcome.invalid > 0 && !skipInvalid);
  if (sending && !blocked) {
    const made = await createBulkSend(
      { db: deps.db, bulkSends: bulkSends(), settings },
      { ...input, skipInvalid },
    );
    return seeOther(ctx, ADMIN_PATHS.bulkSend(made.bulkSend.id));
  }
  const page = pageContextOf(ctx);
  const status = sending || otherProblems ? 422 : 200;
  // The script asks for the findings alone, to put them in place without leaving the page (and the file).
  if (ctx.get('x-requested-with') === 'fetch') renderPage(ctx, status, checkResults(page, outcome));
  else renderPage(ctx, status, bulkSendPage(page, found, outcome));
}
