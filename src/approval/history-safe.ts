import { ApplicationFailure } from '@temporalio/activity';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Db } from '../db/knex.ts';
import { approversStore, type Approver } from '../db/stores/approvers-store.ts';

/**
 * Temporal keeps what activities return and the messages and stack traces of their failures in the workflow's
 * history, readable by anyone with access to the cluster. The approval activities' inputs and results are ids and
 * states; a failure's message is ours or an outside party's (WhatsApp's Graph API may name the number it could
 * not reach), so before it leaves an activity every approver's phone number (E.164 with and without "+", the
 * national form) and name (Arabic, English, typed) in it is replaced by `approver <id>`.
 */

/** What of each approver must not be written into a history, longest first, with the id standing in for it. */
export function personalData(approvers: readonly Approver[]): { text: string; id: string }[] {
  const list: { text: string; id: string }[] = [];
  for (const a of approvers) {
    const digits = a.phone.replace(/\D/g, '');
    const parsed = parsePhoneNumberFromString(`+${digits}`);
    const phones = [`+${digits}`, digits];
    if (parsed) phones.push(parsed.formatNational(), `0${parsed.nationalNumber}`, parsed.nationalNumber);
    for (const text of [...phones, a.nameAr, a.nameEn, a.typedName ?? '']) {
      if (text.trim().length >= 3) list.push({ text: text.trim(), id: a.id });
    }
  }
  return list.sort((x, y) => y.text.length - x.text.length);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `message` with each approver's phone numbers and names replaced by `approver <id>`. */
export function redact(message: string, data: readonly { text: string; id: string }[]): string {
  let out = message;
  for (const { text, id } of data) out = out.replace(new RegExp(escape(text), 'giu'), `approver ${id}`);
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
export function historySafeError(err: unknown, data: readonly { text: string; id: string }[]): unknown {
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
 * Wraps each activity so that a failure naming an approver of the document in its input (`documentId`) is
 * redacted before Temporal records it.
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
        throw historySafeError(err, personalData(approvers));
      }
    };
  }
  return wrapped as T;
}
