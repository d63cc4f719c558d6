import { approvalWorkflowId } from '../../features/approval/definitions.ts';
import { findDocumentForOperator } from '../../features/approval/retry-finalization.ts';
import { approversStore } from '../../features/documents/approvers-store.ts';
import { documentEventsStore } from '../../features/events/document-events-store.ts';
import { printResult, table, type CliCommand } from '../command.ts';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The workflow's page in the Temporal Web UI (its URL layout since UI v2). */
export function temporalUiLink(
  uiUrl: string | undefined,
  namespace: string,
  workflowId: string,
): string | null {
  if (!uiUrl) return null;
  return `${uiUrl}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export const documentCommands: CliCommand[] = [
  {
    words: ['documents', 'show'],
    synopsis: '<document id or reference> [--json]',
    summary: "A document's state, approvers and events, and its workflow in the Temporal UI",
    details: `Names a document by id or by reference (WQT-2026-000042; refused when two accounts share a reference).
The link uses TEMPORAL_UI_URL (default: the dev server's UI when TEMPORAL_ADDRESS is empty).`,
    options: {},
    positionals: { min: 1, max: 1 },
    async run(ctx, { positionals }) {
      const config = ctx.config();
      const view = await ctx.withDb(async (db) => {
        const document = await findDocumentForOperator(db, positionals[0]!);
        const [approvers, events] = await Promise.all([
          approversStore(db).listByDocument(document.id),
          documentEventsStore(db).listByDocument(document.accountId, document.id),
        ]);
        return { document, approvers, events };
      });
      const { document: d } = view;
      const workflowId = d.workflowId ?? approvalWorkflowId(d.id);
      const data = {
        id: d.id,
        reference: d.reference,
        account_id: d.accountId,
        title: { ar: d.titleAr, en: d.titleEn },
        status: d.status,
        workflow_type: d.workflowType,
        finalization: d.finalizationState
          ? { state: d.finalizationState, error: d.finalizationError, failed_at: iso(d.finalizationFailedAt) }
          : null,
        created_at: iso(d.createdAt),
        sent_at: iso(d.sentAt),
        completed_at: iso(d.completedAt),
        expires_at: iso(d.expiresAt),
        workflow: {
          id: workflowId,
          started: d.workflowId !== null,
          ui_url: d.workflowId
            ? temporalUiLink(config.temporal.uiUrl, config.temporal.namespace, workflowId)
            : null,
        },
        approvers: view.approvers.map((a) => ({
          id: a.id,
          order: a.orderIndex,
          name: a.nameEn || a.nameAr,
          phone: `+${a.phone}`,
          action_type: a.actionType,
          status: a.status,
          notification: a.notificationStatus,
          acted_at: iso(a.actedAt),
          channel: a.actionChannel,
          delegated_to: a.delegatedToId,
        })),
        events: view.events.map((e) => ({
          sequence: e.sequence,
          event: e.event,
          at: e.createdAt.toISOString(),
        })),
      };
      printResult(ctx, () => describe(data), data);
      return 0;
    },
  },
];

function describe(d: {
  id: string;
  reference: string;
  account_id: string;
  title: { ar: string; en: string };
  status: string;
  finalization: { state: string; error: string | null; failed_at: string | null } | null;
  workflow: { id: string; started: boolean; ui_url: string | null };
  approvers: {
    order: number;
    name: string;
    phone: string;
    action_type: string;
    status: string;
    acted_at: string | null;
  }[];
  events: { sequence: number; event: string; at: string }[];
}): string {
  const lines = [
    `${d.reference}  ${d.status}  ${d.title.en || d.title.ar}`,
    `id ${d.id}, account ${d.account_id}`,
  ];
  if (d.finalization) lines.push(`finalization ${d.finalization.state}: ${d.finalization.error ?? ''}`);
  lines.push(
    d.workflow.started
      ? `workflow ${d.workflow.id}${d.workflow.ui_url ? `  ${d.workflow.ui_url}` : ' (set TEMPORAL_UI_URL for a link)'}`
      : 'workflow not started (the document was never sent)',
    '',
    'Approvers',
    table(
      ['#', 'STATUS', 'ACTION', 'ACTED', 'PHONE', 'NAME'],
      d.approvers.map((a) => [String(a.order), a.status, a.action_type, a.acted_at ?? '-', a.phone, a.name]),
    ),
    '',
    'Events',
    d.events.length === 0
      ? '(none)'
      : table(
          ['#', 'AT', 'EVENT'],
          d.events.map((e) => [String(e.sequence), e.at, e.event]),
        ),
  );
  return lines.join('\n');
}
