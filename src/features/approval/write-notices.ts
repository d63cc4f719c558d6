import type { Db } from '../../db/knex.ts';
import { createNoticeWaits, type NoticeWaits } from '../../db/notice-waits.ts';
import { EVIDENCE_ACCEPTED_CHANNEL } from './action-evidence-store.ts';
import { DOCUMENT_SENT_CHANNEL } from '../events/document-events-store.ts';
import type { Logger } from '../../logger.ts';

/**
 * The workflow's writes an API answer waits for, announced by PostgreSQL when they commit: an action's evidence
 * accepted (recordApproverAction; migration 028, keyed by the evidence id) and a document's send recorded
 * (markDocumentSent's `document.sent`; migration 029, keyed by the document id). The answer to an action or a send
 * then comes the moment the write does, without reading the row again and again. Both on one connection.
 */
export interface WriteNotices {
  evidenceAccepted: NoticeWaits;
  documentSent: NoticeWaits;
  close(): Promise<void>;
}

export async function createWriteNotices(deps: { db: Db; logger: Logger }): Promise<WriteNotices> {
  const notices = await createNoticeWaits({
    ...deps,
    channels: [EVIDENCE_ACCEPTED_CHANNEL, DOCUMENT_SENT_CHANNEL],
    what: 'write notices',
  });
  return {
    evidenceAccepted: notices.on(EVIDENCE_ACCEPTED_CHANNEL),
    documentSent: notices.on(DOCUMENT_SENT_CHANNEL),
    close: () => notices.close(),
  };
}
