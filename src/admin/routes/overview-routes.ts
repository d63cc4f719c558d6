import type Router from '@koa/router';
import type { AdminDeps, AdminState } from '../context.ts';
import { AdminPageError } from '../errors.ts';
import { loadDocumentDetail, loadOverview } from '../overview.ts';
import { ADMIN_PATHS } from '../paths.ts';
import { isUuid, renderPage } from '../render.ts';
import { requireSession } from '../sessions.ts';
import { documentPage } from '../views/document-page.ts';
import { homePage } from '../views/home-page.ts';
import { pageContextOf } from '../views/page.ts';

export function mountOverviewRoutes(router: Router<AdminState>, deps: AdminDeps): void {
  router.get(ADMIN_PATHS.home, requireSession(), async (ctx) => {
    const overview = await loadOverview(deps, ctx.state.session!.accountId);
    renderPage(ctx, 200, homePage(pageContextOf(ctx), overview));
  });

  router.get('/admin/documents/:id', requireSession(), async (ctx) => {
    const id = ctx.params.id;
    if (!isUuid(id)) throw AdminPageError.notFound();
    const found = await loadDocumentDetail(deps, ctx.state.session!.accountId, id);
    if (!found) throw AdminPageError.notFound();
    renderPage(ctx, 200, documentPage(pageContextOf(ctx), found.doc, found.approvers));
  });
}
