import { adminOverviewStore } from '../db/stores/admin-overview-store.ts';
import type { AdminDeps } from './context.ts';
import type { Section } from './views/home-page.ts';

const LATEST_DOCUMENTS = 10;
const WEBHOOKS_SHOWN = 50;

/** Each section of the overview stands alone: one failing query shows a notice, not an error page. */
async function section<T>(deps: AdminDeps, name: string, load: () => Promise<T>): Promise<Section<T>> {
  try {
    return { ok: true, value: await load() };
  } catch (err) {
    deps.logger.error({ err, section: name }, 'dashboard overview section failed');
    return { ok: false };
  }
}

/** The dashboard's home: documents by status, the latest documents, and each webhook's last delivery. */
export async function loadOverview(deps: AdminDeps, accountId: string) {
  const store = adminOverviewStore(deps.db);
  const [counts, latest, webhooks] = await Promise.all([
    section(deps, 'counts', () => store.documentCountsByStatus(accountId)),
    section(deps, 'latest', () => store.latestDocuments(accountId, LATEST_DOCUMENTS)),
    section(deps, 'webhooks', () => store.webhooksWithLastDelivery(accountId, WEBHOOKS_SHOWN)),
  ]);
  return { counts, latest, webhooks };
}

/** One of the account's documents with its approvers, or undefined (another account's reads as none). */
export async function loadDocumentDetail(deps: AdminDeps, accountId: string, id: string) {
  const store = adminOverviewStore(deps.db);
  const doc = await store.findDocument(accountId, id);
  if (!doc) return undefined;
  return { doc, approvers: await store.approversOf(accountId, id) };
}
