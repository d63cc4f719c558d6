import type Router from '@koa/router';
import { adminOverviewStore } from '../../db/stores/admin-overview-store.ts';
import type { AdminDeps, AdminState } from '../context.ts';
import { AdminPageError } from '../errors.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { isUuid, renderPage } from '../render.ts';
import { requireSession } from '../sessions.ts';
import { documentPage } from '../views/document-page.ts';
import { homePage, type Section } from '../views/home-page.ts';
import { pageContextOf } from '../views/page.ts';

const LATEST_DOCUMENTS = 10;
const WEBHOOKS_SHOWN = 50;

export function mountOverviewRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  /** Each section of the overview stands alone: one failing query shows a notice, not an error page. */
  const section = async <T>(name: string, load: () => Promise<T>): Promise<Section<T>> => {
    try {
      return { ok: true, value: await load() };
    } catch (err) {
      deps.logger.error({ err, section: name }, 'dashboard overview section failed');
      return { ok: false };
    }
  };

  router.get(ADMIN_PATHS.home, requireSession(), async (ctx) => {
    const accountId = ctx.state.session!.accountId;
    const store = adminOverviewStore(deps.db);
    const [counts, latest, webhooks] = await Promise.all([
      section('counts', () => store.documentCountsByStatus(accountId)),
      section('latest', () => store.latestDocuments(accountId, LATEST_DOCUMENTS)),
      section('webhooks', () => store.webhooksWithLastDelivery(accountId, WEBHOOKS_SHOWN)),
    ]);
    renderPage(ctx, 200, homePage(pageContextOf(ctx), { counts, latest, webhooks }));
  });

  router.get('/admin/documents/:id', requireSession(), async (ctx) => {
    const id = ctx.params.id;
    const accountId = ctx.state.session!.accountId;
    if (!isUuid(id)) throw AdminPageError.notFound();
    const store = adminOverviewStore(deps.db);
    const doc = await store.findDocument(accountId, id);
    if (!doc) throw AdminPageError.notFound();
    const approvers = await store.approversOf(accountId, id);
    renderPage(ctx, 200, documentPage(pageContextOf(ctx), doc, approvers));
  });
}
