import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../../../db/knex.ts';
import { approversStore, type Approver } from '../../documents/approvers-store.ts';
import { documentsStore, type Document } from '../../documents/documents-store.ts';
import type { RecordRetry, WhatsAppProvider, WhatsAppTemplateConfig } from '../../../whatsapp/index.ts';
import type { DocumentEvents, DocumentEventsDeps } from '../../events/document-events.ts';
import type { ApprovalPolicies } from '../definitions.ts';
import type { FinalizedDocument } from '../finalize.ts';
import type { FinalizeSlot } from '../../../pdf/workers/pdf-workers.ts';
import type { WorkflowRun } from './workflow-run.ts';

export interface ApprovalActivityDeps extends DocumentEventsDeps {
  whatsapp: { provider: WhatsAppProvider; templates: WhatsAppTemplateConfig; recordRetry?: RecordRetry };
  /**
   * Produces and stores the signed final PDF; set by the finalization module. `slot.whenBusy` `soon` (the local
   * attempt): admitted before any work, or refused (PdfBusyError, retryable) when more than SOON_ROUNDS rounds of
   * finalizations wait or are admitted; `slot.signal` aborting stops its wait or its composition.
   */
  finalize?: (documentId: string, slot?: FinalizeSlot) => Promise<FinalizedDocument>;
  /**
   * The current activity's workflow run (the worker passes `activityWorkflowRun`). markDocumentSent uses it when
   * it finds a draft; without it (activities called directly) the draft is moved unchecked.
   */
  workflowRun?: () => WorkflowRun;
  /** The per-approver reminder cap automatic reminders respect (REMIND_MAX_PER_APPROVER); 5 when not given. */
  reminderLimits?: { maxPerApprover: number };
  /** How long the approval workflow retries each kind of activity (config.approvalPolicies). */
  approvalPolicies?: ApprovalPolicies;
  /** PUBLIC_BASE_URL: signed copies link to the signed file's permanent public URL under it. */
  publicBaseUrl?: string;
}

/** What every approval activity works with: its dependencies and the event machinery built on them. */
export interface ActivityContext {
  deps: ApprovalActivityDeps;
  events: DocumentEvents;
}

/** The defaults of APPROVAL_NOTIFY/FINALIZE/WRITE_RETRY_SECONDS and APPROVAL_FINALIZE_HEARTBEAT_SECONDS. */
export const DEFAULT_APPROVAL_POLICIES: ApprovalPolicies = {
  notifyMs: 6 * 3_600_000,
  finalizeMs: 4 * 3_600_000,
  writeMs: 3_600_000,
  finalizeHeartbeatMs: 30_000,
};

/** A document and its approvers as one read (loadForWorkflow) found them. */
export interface LoadedDocument {
  document: Document;
  approvers: Approver[];
}

/**
 * The document (its row locked when `db` is a transaction), its approvers and the one named; a document or an
 * approver that is not there fails for good (no retry brings it back).
 */
export async function loadForWorkflow(db: Db, documentId: string, approverId?: string) {
  // Outside a transaction a row lock ends with its statement and guards nothing, yet it still writes the row's
  // lock and makes the statement's commit wait for a WAL flush.
  const document = await documentsStore(db).findByIdUnscoped(documentId, {
    forUpdate: db.isTransaction === true,
  });
  if (!document)
    throw ApplicationFailure.nonRetryable(`Document ${documentId} does not exist`, 'document_missing');
  const approvers = await approversStore(db).listByDocument(documentId);
  return {
    document,
    approvers,
    approver: approverId ? approverOn({ document, approvers }, approverId) : undefined,
  };
}

/** The named approver of a loaded document; one that is not there fails for good. */
export function approverOn(loaded: LoadedDocument, approverId: string): Approver {
  const approver = loaded.approvers.find((a) => a.id === approverId);
  if (!approver) {
    throw ApplicationFailure.nonRetryable(
      `Approver ${approverId} is not on document ${loaded.document.id}`,
      'approver_missing',
    );
  }
  return approver;
}
