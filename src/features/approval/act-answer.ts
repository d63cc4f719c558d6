import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from '../../db/knex.ts';
import { actionEvidenceStore } from './action-evidence-store.ts';
import { approversStore } from '../documents/approvers-store.ts';
import { documentsStore } from '../documents/documents-store.ts';
import type { ApprovalClient } from './client.ts';
import type { ActionKind } from './definitions.ts';
import type { NoticeWait } from '../../db/notice-waits.ts';
import type { WriteNotices } from './write-notices.ts';
import { progressOf } from './rules.ts';

/** What the answer to an action tells the approver: the document's status, and how many have completed. */
export interface ActOutcome {
  status: string;
  completed: number;
  total: number;
}

/** How long an action waits for the workflow's own answer before it also watches the read model for its write. */
const ANSWER_GRACE_MS = 250;
/** How often the read model is read meanwhile. */
const WATCH_EVERY_MS = 100;

/**
 * Sends an approver's action (its evidence stored, by id) to the document's workflow and answers as soon as the
 * action is written: the workflow's own answer, or, when that is slow, the read model showing the evidence
 * accepted — whichever comes first. Either way the caller's next read sees the action.
 *
 * Why both: the workflow answers an update once the action's activity has settled, and that activity may do more
 * after the write (from `approval-lean-v5`: send the next approver's WhatsApp request, `recordActionAndNotify`, or
 * finalize the document, `recordActionAndFinalize`; under `approval-lean-v4` the request was a local activity in
 * the task that completes the update), so a slow Meta or a finalization held the approver's answer for as long as
 * they took. The write itself (recordApproverAction, inside those activities) runs only once the acceptance is in
 * the history, and marks the evidence accepted in the same transaction; so an accepted evidence row means the
 * action is taken and written. The read model is read
 * only after ANSWER_GRACE_MS, so an answer that comes quickly costs no statement. Refusals, and the 503 of an
 * answer that never comes, are the workflow's, as before. With the API server's WriteNotices, the read model is
 * not read until PostgreSQL announces the evidence accepted, and then once.
 */
export async function actWhenWritten(
  deps: { db: Knex; approvals: ApprovalClient; writeNotices?: WriteNotices },
  documentId: string,
  action: { approverId: string; kind: ActionKind; evidenceId: string },
): Promise<ActOutcome> {
  // Before the action is sent, so its notice cannot go by first.
  const heard = deps.writeNotices?.evidenceAccepted.watch(action.evidenceId);
  try {
    return await answerOnceWritten(deps, documentId, action, heard);
  } finally {
    heard?.cancel();
  }
}

async function answerOnceWritten(
  deps: { db: Knex; approvals: ApprovalClient },
  documentId: string,
  action: { approverId: string; kind: ActionKind; evidenceId: string },
  heard: NoticeWait | undefined,
): Promise<ActOutcome> {
  const answered = deps.approvals.act(documentId, action);
  let settled = false;
  const done = answered.then(
    (view) => {
      settled = true;
      return { status: view.status, completed: view.completed, total: view.total };
    },
    (err: unknown) => {
      settled = true;
      throw err;
    },
  );
  const written = (async (): Promise<ActOutcome | undefined> => {
    // Told by PostgreSQL that the evidence is accepted: one read of the outcome. Without the notices (or when they
    // stopped meanwhile), the row is read every WATCH_EVERY_MS after ANSWER_GRACE_MS.
    // (The workflow's answer, or its refusal, first: the notice is no longer needed.)
    const answeredFirst = done.then(
      () => false,
      () => false,
    );
    if (heard && (await Promise.race([heard.heard, answeredFirst]))) {
      // Announced accepted, so written (the announcement is sent on commit): no need to read the evidence again.
      const outcome = await outcomeOf(deps.db, documentId).catch(() => undefined);
      if (outcome) return outcome;
    }
    if (settled) return undefined;
    await sleep(ANSWER_GRACE_MS);
    while (!settled) {
      // A read that fails (PostgreSQL away) is not an answer: the workflow's answer, or its 503, still comes.
      const outcome = await writtenOutcome(deps.db, documentId, action.evidenceId).catch(() => undefined);
      if (outcome) return outcome;
      await sleep(WATCH_EVERY_MS);
    }
    return undefined;
  })();
  return Promise.race([done, written.then((outcome) => outcome ?? done)]);
}

/** The outcome from the read model once the action's evidence is accepted; undefined while it is not. */
async function writtenOutcome(
  db: Knex,
  documentId: string,
  evidenceId: string,
): Promise<ActOutcome | undefined> {
  const evidence = await actionEvidenceStore(db).find(evidenceId);
  if (evidence?.state !== 'accepted') return undefined;
  return outcomeOf(db, documentId);
}

/** The document's status and progress as the read model has them. */
async function outcomeOf(db: Knex, documentId: string): Promise<ActOutcome | undefined> {
  const [document, approvers] = await Promise.all([
    documentsStore(db).findByIdUnscoped(documentId),
    approversStore(db).listByDocument(documentId),
  ]);
  if (!document) return undefined;
  return { status: document.status, ...progressOf(approvers) };
}
