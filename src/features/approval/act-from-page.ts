import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Knex } from '../../db/knex.ts';
import { actionEvidenceStore } from './action-evidence-store.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentsStore, type Document } from '../documents/documents-store.ts';
import { statusRefusal } from '../documents/rules.ts';
import { AppError } from '../../errors.ts';
import type { Storage } from '../../storage/storage.ts';
import { ApprovalRefused } from './client.ts';
import type { WriteNotices } from './write-notices.ts';
import type { ActionEvidence, ActionKind } from './definitions.ts';
import type { ActOutcome } from './act-answer.ts';
import type { ActInDatabaseDeps } from './act-in-database.ts';
import { takeAction } from './take-action.ts';
import { hasVerifiedSession } from './approver-otp.ts';
import { hasActed, isOpen } from './rules.ts';

/**
 * The approver's link (docs/product-rules.md §5): a token of one approver, at least 256 random bits, usable until
 * they acted or the document left `pending`/`in_progress`. The approval page is HTTP over these functions.
 */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export interface PageLink {
  approver: Approver;
  document: Document;
}

export type LinkProblem = {
  status: 404 | 409 | 410;
  code: 'not_found' | 'action_refused' | 'gone';
  message: string;
};

/** The approver and document a token names; undefined for a malformed or unknown token. */
export async function findPageLink(db: Knex, token: string | undefined): Promise<PageLink | undefined> {
  if (!token || !TOKEN.test(token)) return undefined;
  const approver = await approversStore(db).findByLinkToken(token);
  const document = approver && (await documentsStore(db).findByIdUnscoped(approver.documentId));
  return approver && document ? { approver, document } : undefined;
}

/** Why a link cannot be used now, or undefined when it can. */
export function linkProblem(link: PageLink | undefined): LinkProblem | undefined {
  if (!link) return { status: 404, code: 'not_found', message: 'This approval link does not exist' };
  const { approver, document } = link;
  if (hasActed(approver.status)) {
    return { status: 410, code: 'gone', message: `This approver has already acted (${approver.status})` };
  }
  if (!isOpen(document.status)) {
    return {
      status: 410,
      code: 'gone',
      message: statusRefusal(document, 'it no longer accepts actions'),
    };
  }
  // Whose turn it is is decided with the action, under the document's row lock (out of turn: 409).
  return undefined;
}

/**
 * The link a token names, when it can be used now; otherwise the 404, 409 or 410 of `linkProblem`, worded by
 * `word` when given (the approval page's language) or as `linkProblem` words it.
 */
export async function usablePageLink(
  db: Knex,
  token: string | undefined,
  word?: (problem: LinkProblem, link: PageLink | undefined) => string,
): Promise<PageLink> {
  const link = await findPageLink(db, token);
  const problem = linkProblem(link);
  if (problem) throw new AppError(problem.code, word ? word(problem, link) : problem.message);
  return link!;
}

/** The name of the page's proof of a right one-time code: an HttpOnly cookie scoped to `/a/{token}`. */
export const OTP_COOKIE = 'wathiq_verified';

/**
 * How an approver acting from the page is verified: `none` when their `verification` is none;
 * `whatsapp_otp` when it is whatsapp_otp and `session` is their current proof of a right code; otherwise 403.
 */
export async function pageVerification(
  db: Knex,
  link: PageLink,
  session: string | undefined,
): Promise<'none' | 'whatsapp_otp'> {
  if (link.approver.verification !== 'whatsapp_otp') return 'none';
  if (await hasVerifiedSession(db, link.approver.id, session)) return 'whatsapp_otp';
  throw new AppError(
    'forbidden',
    'This approver must first enter the code sent to their WhatsApp number (POST /a/{token}/code sends one, POST /a/{token}/code/verify checks it)',
  );
}

/**
 * The approver completes or rejects from the page. A drawn signature or stamp image is stored first, then the
 * action is taken with its evidence (time, IP address, user agent, image key, typed name, reason) written to
 * PostgreSQL (takeAction: with the action, under the document's row lock, and signalled; or stored first and
 * passed by id as the act update for runs of earlier versions): nothing personal enters the workflow's history.
 * If the action is refused, no evidence row is left and the image is removed again (no evidence is left
 * attributed to an action that was not taken) and the refusal becomes 409 (not their turn, not notified), 404 (not
 * an approver of the document) or 410 (too late). When an earlier run's answer is lost (a time-out, Temporal
 * unreachable) it may still take the action, so both stay; its write marks the row accepted if it does. A
 * repeated submit is refused as `already_acted`.
 */
export async function actFromPage(
  deps: ActInDatabaseDeps & { storage: Storage; writeNotices?: WriteNotices },
  link: PageLink,
  kind: ActionKind,
  evidence: ActionEvidence,
  image?: Buffer,
): Promise<ActOutcome> {
  const { approver, document } = link;
  if (image) {
    evidence.imageKey = `approvals/${document.id}/${approver.id}/${randomUUID()}.png`;
    await deps.storage.put(evidence.imageKey, Readable.from([image]), { contentType: 'image/png' });
  }
  const evidenceId = randomUUID();
  try {
    return await takeAction(deps, document.id, { approverId: approver.id, kind, evidenceId, evidence });
  } catch (err) {
    if (!(err instanceof ApprovalRefused)) {
      // A write the database refused took the evidence row with it (or never wrote it): its image goes too.
      const left = await actionEvidenceStore(deps.db)
        .find(evidenceId)
        .catch(() => 'unknown' as const);
      if (!left && evidence.imageKey) await deps.storage.delete(evidence.imageKey).catch(() => undefined);
      throw err;
    }
    // A refusal leaves no evidence row (takeAction): the image goes too.
    if (evidence.imageKey) await deps.storage.delete(evidence.imageKey).catch(() => undefined);
    if (err.refusal === 'not_your_turn' || err.refusal === 'not_notified')
      throw new AppError('action_refused', err.message);
    if (err.refusal === 'delegation_pending') throw new AppError('delegation_pending', err.message);
    if (err.refusal === 'unknown_approver') throw AppError.notFound('Approver');
    throw new AppError('gone', err.message);
  }
}
