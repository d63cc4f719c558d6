import type { CcRecipient } from '../../domain/model.ts';
import type { Db } from '../knex.ts';

/**
 * Read-only queries behind the dashboard's overview. The tables belong to the documents and webhooks modules;
 * this store reads only the columns its pages show (of the initial schema, and `delegated_to_id` and `cc` of
 * migrations 022 and 024) and never writes, so those modules stay free to evolve.
 * Every query is scoped by account.
 */

export interface DocumentSummary {
  id: string;
  reference: string;
  titleAr: string;
  titleEn: string;
  status: string;
  createdAt: Date;
  expiresAt: Date;
  approversTotal: number;
  approversDone: number;
}

export interface DocumentDetail extends DocumentSummary {
  department: string | null;
  workflowType: string;
  sentAt: Date | null;
  completedAt: Date | null;
  rejectionReason: string | null;
  /** Who receives a copy of the signed PDF besides the approvers (migration 024), in the order given. */
  cc: CcRecipient[];
}

export interface ApproverSummary {
  id: string;
  nameAr: string;
  nameEn: string;
  roleAr: string | null;
  roleEn: string | null;
  phone: string;
  actionType: string;
  orderIndex: number;
  status: string;
  actedAt: Date | null;
  /** Status `delegated`: the delegate's row (migration 022). */
  delegatedToId: string | null;
}

export interface WebhookSummary {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  disabledReason: string | null;
  lastDelivery: {
    event: string;
    status: string;
    statusCode: number | null;
    attemptCount: number;
    at: Date;
  } | null;
}

interface DocumentRow {
  id: string;
  reference: string;
  title_ar: string;
  title_en: string;
  status: string;
  created_at: Date;
  expires_at: Date;
  approvers_total: number;
  approvers_done: number;
  department: string | null;
  workflow_type: string;
  sent_at: Date | null;
  completed_at: Date | null;
  rejection_reason: string | null;
  cc: CcRecipient[] | null;
}

interface ApproverRow {
  id: string;
  name_ar: string;
  name_en: string;
  role_ar: string | null;
  role_en: string | null;
  phone: string;
  action_type: string;
  order_index: number;
  status: string;
  acted_at: Date | null;
  delegated_to_id: string | null;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  disabled_reason: string | null;
  d_event: string | null;
  d_status: string | null;
  d_status_code: number | null;
  d_attempt_count: number | null;
  d_at: Date | null;
}

const toSummary = (r: DocumentRow): DocumentSummary => ({
  id: r.id,
  reference: r.reference,
  titleAr: r.title_ar,
  titleEn: r.title_en,
  status: r.status,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  approversTotal: r.approvers_total,
  approversDone: r.approvers_done,
});

// An approver is done once they acted without rejecting; whatever status names the workflow settles on.
const approverCounts = (q: Db) => [
  q.raw(
    `(SELECT count(*) FROM approvers a WHERE a.document_id = d.id AND a.account_id = d.account_id
        AND a.status <> 'delegated')::int AS approvers_total`,
  ),
  q.raw(
    `(SELECT count(*) FROM approvers a WHERE a.document_id = d.id AND a.account_id = d.account_id
        AND a.acted_at IS NOT NULL AND a.status NOT IN ('rejected', 'delegated'))::int AS approvers_done`,
  ),
];

const toApproverSummary = (r: ApproverRow): ApproverSummary => ({
  id: r.id,
  nameAr: r.name_ar,
  nameEn: r.name_en,
  roleAr: r.role_ar,
  roleEn: r.role_en,
  phone: r.phone,
  actionType: r.action_type,
  orderIndex: r.order_index,
  status: r.status,
  actedAt: r.acted_at,
  delegatedToId: r.delegated_to_id,
});

const toWebhookSummary = (r: WebhookRow): WebhookSummary => ({
  id: r.id,
  url: r.url,
  events: r.events,
  active: r.active,
  disabledReason: r.disabled_reason,
  lastDelivery:
    r.d_event !== null && r.d_at !== null
      ? {
          event: r.d_event,
          status: r.d_status ?? '',
          statusCode: r.d_status_code,
          attemptCount: r.d_attempt_count ?? 0,
          at: r.d_at,
        }
      : null,
});

export function adminOverviewStore(db: Db) {
  return {
    async documentCountsByStatus(accountId: string): Promise<Map<string, number>> {
      const rows = await db('documents')
        .where({ account_id: accountId })
        .groupBy('status')
        .select<{ status: string; count: number }[]>('status', db.raw('count(*)::int AS count'));
      return new Map(rows.map((r) => [r.status, r.count]));
    },

    async latestDocuments(accountId: string, limit: number): Promise<DocumentSummary[]> {
      const rows = await db('documents as d')
        .where('d.account_id', accountId)
        .orderBy([
          { column: 'd.created_at', order: 'desc' },
          { column: 'd.id', order: 'desc' },
        ])
        .limit(limit)
        .select<DocumentRow[]>('d.*', ...approverCounts(db));
      return rows.map(toSummary);
    },

    async findDocument(accountId: string, id: string): Promise<DocumentDetail | undefined> {
      const row = await db('documents as d')
        .where({ 'd.account_id': accountId, 'd.id': id })
        .first<DocumentRow | undefined>('d.*', ...approverCounts(db));
      return (
        row && {
          ...toSummary(row),
          department: row.department,
          workflowType: row.workflow_type,
          sentAt: row.sent_at,
          completedAt: row.completed_at,
          rejectionReason: row.rejection_reason,
          cc: row.cc ?? [],
        }
      );
    },

    async approversOf(accountId: string, documentId: string): Promise<ApproverSummary[]> {
      const rows = await db('approvers')
        .where({ account_id: accountId, document_id: documentId })
        .orderBy([{ column: 'order_index' }, { column: 'created_at' }])
        .select<ApproverRow[]>('*');
      return rows.map(toApproverSummary);
    },

    async webhooksWithLastDelivery(accountId: string, limit: number): Promise<WebhookSummary[]> {
      const rows = await db('webhooks as w')
        .where('w.account_id', accountId)
        .joinRaw(
          `LEFT JOIN LATERAL (
             SELECT event, status, last_status_code, attempt_count, coalesce(completed_at, updated_at) AS at
             FROM webhook_deliveries
             WHERE webhook_id = w.id AND account_id = w.account_id
             ORDER BY created_at DESC, id DESC
             LIMIT 1
           ) d ON true`,
        )
        .orderBy([
          { column: 'w.created_at', order: 'desc' },
          { column: 'w.id', order: 'desc' },
        ])
        .limit(limit)
        .select<WebhookRow[]>(
          'w.id',
          'w.url',
          'w.events',
          'w.active',
          'w.disabled_reason',
          'd.event as d_event',
          'd.status as d_status',
          'd.last_status_code as d_status_code',
          'd.attempt_count as d_attempt_count',
          'd.at as d_at',
        );
      return rows.map(toWebhookSummary);
    },
  };
}
