import { randomUUID } from 'node:crypto';
import type { Knex } from '../../db/knex.ts';
import { createDocument } from '../documents/create-document.ts';
import type { DocumentInput } from '../documents/inputs.ts';
import type { CcRecipient } from '../../domain/model.ts';
import { AppError, mergeDetails, type ErrorDetails } from '../../errors.ts';
import { checkRecipients } from './recipients.ts';
import { approversFor, type Recipients } from './roles.ts';
import type { TemplateVersion } from './template-store.ts';
import { loadTemplate } from './template-service.ts';

/** What one document made from a template may set besides its people. */
export interface DocumentOverrides {
  titleAr?: string;
  titleEn?: string;
  cc?: CcRecipient[];
}

/** The document a template version makes for these recipients: exactly what POST /documents would take. */
export function documentInputFor(
  version: TemplateVersion,
  recipients: Recipients,
  overrides: DocumentOverrides = {},
): DocumentInput {
  return {
    titleAr: overrides.titleAr ?? version.titleAr,
    titleEn: overrides.titleEn ?? version.titleEn,
    department: version.department,
    workflowType: version.workflowType,
    expiresInDays: version.expiresInDays,
    approvers: approversFor(version.roles, recipients),
    reminders: version.reminders,
    allowDelegation: version.allowDelegation,
    cc: overrides.cc ?? version.cc,
  };
}

/**
 * Makes a draft from a template version, as POST /documents would (the same transaction: reference, approvers,
 * `document.created`), carrying `template: {id, version}` and reading the version's PDF (shared, not copied).
 */
export function createFromVersion(
  db: Knex,
  input: {
    accountId: string;
    version: TemplateVersion;
    recipients: Recipients;
    overrides?: DocumentOverrides;
    id?: string;
  },
): ReturnType<typeof createDocument> {
  const { version } = input;
  return createDocument(db, {
    id: input.id ?? randomUUID(),
    accountId: input.accountId,
    fields: documentInputFor(version, input.recipients, input.overrides),
    file: { ...version.file },
    template: { id: version.templateId, version: version.version },
  });
}

/** POST /templates/{id}/documents: the template's current version, its recipients checked against its roles. */
export async function createDocumentFromTemplate(
  db: Knex,
  input: {
    accountId: string;
    templateId: string;
    recipients: unknown;
    overrides: DocumentOverrides;
    details?: ErrorDetails;
  },
): ReturnType<typeof createDocument> {
  const { version } = await loadTemplate(db, {
    accountId: input.accountId,
    id: input.templateId,
    usable: true,
  });
  const checked = checkRecipients(version.roles, input.recipients, 'recipients');
  const details = mergeDetails(input.details ?? {}, checked.details);
  if (Object.keys(details).length) throw AppError.validation(details);
  return createFromVersion(db, {
    accountId: input.accountId,
    version,
    recipients: checked.recipients,
    overrides: input.overrides,
  });
}
