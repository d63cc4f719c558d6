import { actInDatabase, type ActInDatabaseDeps } from './act-in-database.ts';
import { actWhenWritten, type ActOutcome } from './act-answer.ts';
import type { ActionKind } from './definitions.ts';
import type { WriteNotices } from './write-notices.ts';

/**
 * An approver's action (its evidence stored, by id), taken the way the document's run understands: recorded by
 * the API and signalled (runs whose first activity said `signal`, which the transaction that locks the document
 * reads), or sent as the act update (runs of earlier versions, pinned to the code that started them). Refusals
 * are ApprovalRefused either way.
 */
export async function takeAction(
  deps: ActInDatabaseDeps & { writeNotices?: WriteNotices },
  documentId: string,
  action: { approverId: string; kind: ActionKind; evidenceId: string },
): Promise<ActOutcome> {
  return (await actInDatabase(deps, documentId, action)) ?? actWhenWritten(deps, documentId, action);
}
