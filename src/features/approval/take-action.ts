import { actInDatabase, type ActInDatabaseDeps } from './act-in-database.ts';
import { actWhenWritten, type ActOutcome } from './act-answer.ts';
import { approvalSignalsStore } from './approval-signals-store.ts';
import type { ActionKind } from './definitions.ts';
import type { WriteNotices } from './write-notices.ts';

/**
 * An approver's action (its evidence stored, by id), taken the way the document's run understands: recorded by
 * the API and signalled (runs whose first activity said `signal`), or sent as the act update (runs of earlier
 * versions, pinned to the code that started them). Refusals are ApprovalRefused either way.
 */
export async function takeAction(
  deps: ActInDatabaseDeps & { writeNotices?: WriteNotices },
  documentId: string,
  action: { approverId: string; kind: ActionKind; evidenceId: string },
): Promise<ActOutcome> {
  const protocol = await approvalSignalsStore(deps.db).protocolOf(documentId);
  if (protocol === 'signal') return actInDatabase(deps, documentId, action);
  return actWhenWritten(deps, documentId, action);
}
