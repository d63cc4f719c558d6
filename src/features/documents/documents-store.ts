import type { CcRecipient, DocumentStatus } from '../../domain/model.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import { randomToken, sha256Hex } from '../../auth/tokens.ts';
import type { Db } from '../../db/knex.ts';
import { named, preparedRows } from '../../db/prepared.ts';
import { finalTokenContext, storedToken } from '../../db/sealed-columns.ts';
import type { Approver } from './approvers-store.ts';
import { SHOWN_BY_IDS, type ShownRow } from './shown-documents.ts';
import {
  BY_ID,
  DOCUMENT_COLUMNS,
  FINAL_TOKEN_BYTES,
  formatReference,
  fromWithApproversRow,
  PAGE,
  PAGE_BY_STATUS,
  toDocument,
  toRowPatch,
  type Document,
  type DocumentPatch,
  type DocumentRow,
  type DocumentSignature,
  type ListRow,
  type NewDocument,
  type WithApproversRow,
} from './documents-rows.ts';

export {
  formatReference,
  openFinalToken,
  openVerificationToken,
  toDocument,
  type Document,
  type DocumentPatch,
  type DocumentRow,
  type DocumentSignature,
  type FinalizationState,
  type NewDocument,
} from './documents-rows.ts';

/**
 * Documents. Every read an API key can cause is scoped by account; the `…Unscoped` reads are for the workflow
 * activities and the public file route, which hold an id or token rather than an account.
 */
export function documentsStore(db: Db) {
  return {
    ...documentCreation(db),
    ...documentReads(db),
    ...documentPages(db),
    ...documentChanges(db),
    ...finalFiles(db),
  };
}

/** A new document: its reference and its row. */
function documentCreation(db: Db) {
  return {
    /**
     * The next reference of an account's year. The upsert takes the counter row's lock until the surrounding
     * transaction ends, so concurrent creations queue on it, and a rolled-back creation gives its number back:
     * no gaps, no duplicates. Call it inside the transaction that inserts the document.
     */
    async allocateReference(accountId: string, year: number): Promise<string> {
      const { rows } = await db.raw<{ rows: { last_sequence: number }[] }>(
        `INSERT INTO reference_counters (account_id, year, last_sequence) VALUES (?, ?, 1)
         ON CONFLICT (account_id, year) DO UPDATE SET last_sequence = reference_counters.last_sequence + 1
         RETURNING last_sequence`,
        [accountId, year],
      );
      return formatReference(year, rows[0]!.last_sequence);
    },

    async insert(input: NewDocument): Promise<Document> {
      const [row] = await db<DocumentRow>('documents')
        .insert({
          id: input.id,
          account_id: input.accountId,
          reference: input.reference,
          title_ar: input.titleAr,
          title_en: input.titleEn,
          department: input.department,
          workflow_type: input.workflowType,
          status: 'draft',
          expires_at: input.expiresAt,
          file_key: input.fileKey,
          file_name: input.fileName,
          file_sha256: input.fileSha256,
          file_size: input.fileSize,
          page_count: input.pageCount,
          ...(input.reminders ? { reminders: input.reminders } : {}),
          ...(input.allowDelegation ? { allow_delegation: true } : {}),
          // A JS array would be sent as a PostgreSQL array: jsonb takes the JSON text.
          ...(input.cc?.length ? { cc: JSON.stringify(input.cc) as unknown as CcRecipient[] } : {}),
          ...(input.template
            ? { template_id: input.template.id, template_version: input.template.version }
            : {}),
        })
        .returning('*');
      return toDocument(row!);
    },
  };
}

/** One document, read by account and id, or by id or token for the workflow and the public file route. */
function documentReads(db: Db) {
  return {
    async findById(accountId: string, id: string): Promise<Document | undefined> {
      const row = await db<DocumentRow>('documents').where({ id, account_id: accountId }).first();
      return row && toDocument(row);
    },

    /**
     * The document and its approvers (in order) in one round trip, and its sealed verification token when it has one
     * (`openVerificationToken`): the
     * approvers ride along as JSON, so the read the API serves most costs a single (prepared) query.
     */
    async findWithApprovers(
      accountId: string,
      id: string,
    ): Promise<{ document: Document; approvers: Approver[]; verificationSealed: string | null } | undefined> {
      const [row] = await preparedRows<WithApproversRow>(db, 'wathiq_document_with_approvers', BY_ID, [
        id,
        accountId,
      ]);
      return row && fromWithApproversRow(row);
    },

    /**
     * The row, locked until the transaction ends: status checks and the changes they allow happen atomically.
     * `FOR NO KEY UPDATE`, the lock an UPDATE that keeps the key takes: it excludes every other writer of the
     * document (and its deletion), but not the foreign-key checks of rows inserted beside it (an action's evidence,
     * a WhatsApp message, an event), which `FOR UPDATE` made wait for the whole transaction.
     */
    async findByIdForUpdate(accountId: string, id: string): Promise<Document | undefined> {
      const row = await db<DocumentRow>('documents')
        .where({ id, account_id: accountId })
        .forNoKeyUpdate()
        .first();
      return row && toDocument(row);
    },

    /** `forUpdate`: locked as findByIdForUpdate locks it. */
    async findByIdUnscoped(id: string, options: { forUpdate?: boolean } = {}): Promise<Document | undefined> {
      // The workflow's activities read and lock documents this way on every step: named, planned once a connection.
      const query = db('documents').where({ id });
      const row = await (
        options.forUpdate
          ? query.forNoKeyUpdate().options(named('document_by_id_for_update'))
          : query.options(named('document_by_id'))
      ).first<DocumentRow | undefined>(DOCUMENT_COLUMNS);
      return row && toDocument(row);
    },

    /** Every account's documents with this reference (references are counted per account), for operators. */
    async findByReferenceUnscoped(reference: string): Promise<Document[]> {
      const rows = await db('documents')
        .where({ reference })
        .orderBy('created_at')
        .select<DocumentRow[]>('*');
      return rows.map(toDocument);
    },

    /** Looked up by the token's SHA-256: the table holds no usable token. */
    async findByFinalToken(token: string): Promise<Document | undefined> {
      const row = await db<DocumentRow>('documents')
        .where({ final_token_sha256: sha256Hex(token) })
        .first();
      return row && toDocument(row);
    },
  };
}

/** An account's documents, a page at a time. */
function documentPages(db: Db) {
  return {
    /**
     * Newest first (then by id), each with its approvers and sealed verification token, and `total`, every match for the
     * page metadata, in one prepared query. The page is an index range with a limit (migration 025's indexes end
     * in the order's columns) and `total` comes from the counters migration 025 keeps, so neither grows with the
     * account. An `offset` past the end gives no documents and the total.
     */
    async list(
      accountId: string,
      options: { status?: DocumentStatus; limit: number; offset: number },
    ): Promise<{
      documents: Document[];
      approvers: Map<string, Approver[]>;
      verificationSealed: Map<string, string>;
      total: number;
    }> {
      const rows = options.status
        ? await preparedRows<ListRow>(db, 'wathiq_documents_page_by_status', PAGE_BY_STATUS, [
            accountId,
            options.status,
            options.limit,
            options.offset,
          ])
        : await preparedRows<ListRow>(db, 'wathiq_documents_page', PAGE, [
            accountId,
            options.limit,
            options.offset,
          ]);
      const documents: Document[] = [];
      const approvers = new Map<string, Approver[]>();
      const verificationSealed = new Map<string, string>();
      for (const row of rows) {
        if (row.id === null) continue; // the total's row of an empty page
        const found = fromWithApproversRow(row);
        documents.push(found.document);
        approvers.set(found.document.id, found.approvers);
        if (found.verificationSealed) verificationSealed.set(found.document.id, found.verificationSealed);
      }
      return { documents, approvers, verificationSealed, total: Number(rows[0]?.total ?? 0) };
    },
  };
}

/** Changes to a document's row: its fields, its status, its deletion. */
function documentChanges(db: Db) {
  return {
    /** Applies `patch` and bumps `updated_at`; undefined when the account has no such document. */
    async update(accountId: string, id: string, patch: DocumentPatch): Promise<Document | undefined> {
      const [row] = await db('documents')
        .where({ id, account_id: accountId })
        .update({ ...toRowPatch(patch), updated_at: db.fn.now() })
        .returning<DocumentRow[]>('*');
      return row && toDocument(row);
    },

    /**
     * A guarded status move for the workflow: applies only while the status is one of `from`, so a replayed or
     * late activity cannot move a document backwards. Undefined when the guard did not hold.
     */
    async transition(
      id: string,
      from: readonly DocumentStatus[],
      to: DocumentStatus,
      patch: Omit<DocumentPatch, 'status'> = {},
    ): Promise<Document | undefined> {
      const [row] = await db('documents')
        .where({ id })
        .whereIn('status', [...from])
        .update({ ...toRowPatch(patch), status: to, updated_at: db.fn.now() })
        .returning<DocumentRow[]>('*');
      return row && toDocument(row);
    },

    /**
     * The move to `approved` from one of `from`; a finalization that had failed for good reads `succeeded` from then
     * on (failed_at stays), decided by the row itself within the UPDATE. Undefined when the guard did not hold.
     */
    async approve(id: string, from: readonly DocumentStatus[], at: Date): Promise<Document | undefined> {
      const state = "CASE WHEN finalization_state = 'failed' THEN 'succeeded' ELSE finalization_state END";
      const [row] = await db('documents')
        .where({ id })
        .whereIn('status', [...from])
        .update({
          status: 'approved',
          completed_at: at,
          finalization_state: db.raw(state),
          updated_at: db.fn.now(),
        })
        .returning<DocumentRow[]>('*');
      return row && toDocument(row);
    },

    /** Deletes the row (approvers cascade); true when there was one. */
    async delete(accountId: string, id: string): Promise<boolean> {
      const n = await db('documents').where({ id, account_id: accountId }).delete();
      return n > 0;
    },
  };
}

/** The signed final file's token, storage key and SHA-256. */
function finalFiles(db: Db) {
  return {
    /**
     * Reserves the final file's token and storage key, once: only while no token is set, so a concurrent or
     * retried finalization keeps the first reservation. Returns the document as this reservation left it;
     * undefined when another had reserved it already (read theirs with `findByIdUnscoped`).
     */
    async reserveFinalFile(id: string, key: string, secrets: SecretBox): Promise<Document | undefined> {
      const token = storedToken(secrets, randomToken(FINAL_TOKEN_BYTES), finalTokenContext(id));
      const [row] = await db<DocumentRow>('documents')
        .where({ id })
        .whereNull('final_token_sha256')
        .update({ final_token_sha256: token.sha256, final_token_sealed: token.sealed, final_file_key: key })
        .returning('*');
      return row && toDocument(row);
    },

    /**
     * Gives an approved document's signed file a new token: the old URL names nothing from this commit on. Returns
     * the document and its new token; undefined when the account has no such document with a stored file.
     */
    async rotateFinalToken(
      accountId: string,
      id: string,
      secrets: SecretBox,
    ): Promise<{ document: Document; token: string } | undefined> {
      const token = randomToken(FINAL_TOKEN_BYTES);
      const stored = storedToken(secrets, token, finalTokenContext(id));
      const [row] = await db('documents')
        .where({ id, account_id: accountId, status: 'approved' })
        .whereNotNull('final_sha256')
        .update({
          final_token_sha256: stored.sha256,
          final_token_sealed: stored.sealed,
          updated_at: db.fn.now(),
        })
        .returning<DocumentRow[]>('*');
      return row && { document: toDocument(row), token };
    },

    /** Records the SHA-256 of the stored final file and what signed it, for the reservation `token` only. */
    async recordFinalSha256(
      id: string,
      token: string,
      sha256: string,
      signature: DocumentSignature | null = null,
    ): Promise<void> {
      await db('documents')
        .where({ id, final_token_sha256: sha256Hex(token) })
        .update({
          final_sha256: sha256,
          signature: signature === null ? null : JSON.stringify(signature),
          updated_at: db.fn.now(),
        });
    },
  };
}

export type DocumentsStore = ReturnType<typeof documentsStore>;

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The API's most frequent read, `GET /documents/{id}` (`SHOWN_BY_IDS`), coalesced: the reads asked for while one
 * turn of the event loop runs go to PostgreSQL as one query when the turn ends, instead of a round trip each. Under
 * many concurrent clients that is one pooled connection, one statement and one wake-up of a PostgreSQL backend for
 * a whole batch. At most `maxInFlight` queries run at once: reads asked meanwhile gather until one returns, so a busier API sends
 * larger batches instead of more statements, and keeps fewer PostgreSQL backends competing with it for the cores.
 * It is not a cache: a read joins only a query not yet sent, so it sees every write committed before it was asked.
 * A failed query fails every read of its batch. Holds the batch being gathered: one per app, not per request.
 */
export function coalescedDocumentReads(db: Db, maxBatch = 100, maxInFlight = 2) {
  interface Waiting {
    accountId: string;
    id: string;
    resolve: (found: ShownRow | undefined) => void;
    reject: (err: unknown) => void;
  }
  const gathering: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;
  const send = async (batch: Waiting[]) => {
    try {
      // The ids are checked UUIDs, so the array literals need no quoting.
      const rows = await preparedRows<ShownRow>(db, 'wathiq_shown_documents', SHOWN_BY_IDS, [
        `{${batch.map((w) => w.id).join(',')}}`,
        `{${batch.map((w) => w.accountId).join(',')}}`,
      ]);
      for (const row of rows) batch[row.n - 1]!.resolve(row);
      // A promise settles once: this settles only the reads no row answered.
      for (const w of batch) w.resolve(undefined);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  };
  // At the end of a turn, so that the reads the turn brought join the batch.
  const schedule = () => {
    if (scheduled || gathering.length === 0 || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  };
  const flush = () => {
    scheduled = false;
    while (gathering.length > 0 && inFlight < maxInFlight) {
      const batch = gathering.splice(0, maxBatch);
      inFlight++;
      void send(batch).finally(() => {
        inFlight--;
        schedule();
      });
    }
  };
  return {
    find(accountId: string, id: string): Promise<ShownRow | undefined> {
      if (!UUID_SHAPE.test(id) || !UUID_SHAPE.test(accountId)) return Promise.resolve(undefined);
      return new Promise((resolve, reject) => {
        gathering.push({ accountId, id, resolve, reject });
        schedule();
      });
    },
  };
}

export type CoalescedDocumentReads = ReturnType<typeof coalescedDocumentReads>;
