import { ApplicationFailure } from '@temporalio/activity';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Db } from '../../db/knex.ts';
import { approversStore, type Approver } from '../documents/approvers-store.ts';
import { documentsStore } from '../documents/documents-store.ts';
import type { CcRecipient } from '../../domain/model.ts';

/**
 * Temporal keeps what activities return and the messages and stack traces of their failures in the workflow's
 * history, readable by anyone with access to the cluster. The approval activities' inputs and results are ids and
 * states; a failure's message is ours or an outside party's (WhatsApp's Graph API may name the number it could
 * not reach), so before it leaves an activity every approver's phone number (E.164 with and without "+", the
 * national form) and name (Arabic, English, typed) in it is replaced by `approver <id>`, and every cc recipient's
 * (who get the signed copy) by `cc recipient <position>`.
 */

/** What stands in a history for one person's text. */
export interface PersonalText {
  text: string;
  as: string;
}

/** A phone number in every form a message may give it. */
function phoneForms(phone: string): string[] {
  const digits = phone.replace(/\D/g, '');
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  const forms = [`+${digits}`, digits];
  if (parsed) forms.push(parsed.formatNational(), `0${parsed.nationalNumber}`, parsed.nationalNumber);
  return forms;
}

/**
 * What of each approver and cc recipient must not be written into a history, longest first, with what stands in
 * for it.
 */
export function personalData(
  approvers: readonly Approver[],
  cc: readonly CcRecipient[] = [],
): PersonalText[] {
  const list: PersonalText[] = [];
  const add = (texts: readonly string[], as: string) => {
    for (const text of texts) if (text.trim().length >= 3) list.push({ text: text.trim(), as });
  };
  for (const a of approvers)
    add([...phoneForms(a.phone), a.nameAr, a.nameEn, a.typedName ?? ''], `approver ${a.id}`);
  cc.forEach((c, i) => add([...phoneForms(c.phone), c.name ?? ''], `cc recipient ${i + 1}`));
  return list.sort((x, y) => y.text.length - x.text.length);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `message` with each person's phone numbers and names replaced by what stands in for them. */
export function redact(message: string, data: readonly PersonalText[]): string {
  let out = message;
  for (const { text, as } of data) out = out.replace(new RegExp(escape(text), 'giu'), as);
  return out;
}

function texts(err: unknown): string[] {
  const out: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    out.push(e.message, e.stack ?? '');
  return out;
}

/**
 * `err` as it may enter the history: unchanged when neither it nor its causes name an approver, otherwise an
 * ApplicationFailure of the same type and retryability with the redacted message and no cause.
 */
export function historySafeError(err: unknown, data: readonly PersonalText[]): unknown {
  const all = texts(err).join('\n');
  if (!(err instanceof Error) || redact(all, data) === all) return err;
  const failure = err instanceof ApplicationFailure ? err : undefined;
  return ApplicationFailure.create({
    type: failure?.type ?? err.name,
    message: redact(err.message, data),
    nonRetryable: failure?.nonRetryable ?? false,
  });
}

/**
 * Wraps each activity so that a failure naming an approver or a cc recipient of the document in its input
 * (`documentId`) is redacted before Temporal records it.
 */
export function withHistorySafeFailures<T extends object>(db: Db, activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities) as [string, (input: unknown) => Promise<unknown>][]) {
    wrapped[name] = async (input: unknown) => {
      try {
        return await fn(input);
      } catch (err) {
        const documentId = (input as { documentId?: unknown } | undefined)?.documentId;
        if (typeof documentId !== 'string') throw err;
        const approvers = await approversStore(db)
          .listByDocument(documentId)
          .catch(() => [] as Approver[]);
        const cc = await documentsStore(db)
          .findByIdUnscoped(documentId)
          .then((d) => d?.cc ?? [])
          .catch(() => [] as CcRecipient[]);
        throw historySafeError(err, personalData(approvers, cc));
      }
    };
  }
  return wrapped as T;
}
