import { actInDatabase, type ActInDatabaseDeps, type EvidencedAction } from './act-in-database.ts';
import { actWhenWritten, type ActOutcome } from './act-answer.ts';
import { actionEvidenceStore } from './action-evidence-store.ts';
import { ApprovalRefused } from './client.ts';
import type { WriteNotices } from './write-notices.ts';

/**
 * An approver's action, taken the way the document's run understands: recorded by the API with its evidence and
 * signalled (runs whose first activity said `signal`, which the transaction that locks the document reads), or
 * sent as the act update (runs of earlier versions, pinned to the code that started them), which is given the
 * evidence by id: stored first, `submitted`, and removed again when the run refuses the action. Refusals are
 * ApprovalRefused either way, and leave no evidence behind.
 */
export async function takeAction(
  deps: ActInDatabaseDeps & { writeNotices?: WriteNotices },
  documentId: string,
  action: EvidencedAction,
): Promise<ActOutcome> {
  const recorded = await actInDatabase(deps, documentId, action);
  if (recorded) return recorded;
  const { evidenceId, approverId, kind, evidence } = action;
  const store = actionEvidenceStore(deps.db);
  await store.submit({ id: evidenceId, documentId, approverId, kind, evidence });
  try {
    return await actWhenWritten(deps, documentId, { approverId, kind, evidenceId });
  } catch (err) {
    if (err instanceof ApprovalRefused) await store.discard(evidenceId);
    throw err;
  }
}
