import type { Knex } from '../../db/knex.ts';
import type { DocumentFile } from '../documents/inputs.ts';
import { placementProblem } from '../documents/rules.ts';
import { AppError, newDetails, addDetail, type ErrorDetails } from '../../errors.ts';
import type { Role } from './roles.ts';
import type { TemplateFields, TemplateUpdate } from './schemas.ts';
import {
  templateStore,
  type Template,
  type TemplateVersion,
  type TemplateWithVersion,
} from './template-store.ts';

/** `roles.N.placement.page` for every role placed beyond the PDF's last page. */
export function rolePlacementDetails(roles: readonly Role[], pageCount: number): ErrorDetails {
  const details = newDetails();
  roles.forEach((r, i) => {
    const problem = placementProblem(r.placement, pageCount);
    if (problem) addDetail(details, `roles.${i}.placement.page`, problem);
  });
  return details;
}

function versionFrom(templateId: string, version: number, fields: TemplateFields, file: DocumentFile) {
  return {
    templateId,
    version,
    titleAr: fields.titleAr,
    titleEn: fields.titleEn,
    department: fields.department,
    workflowType: fields.workflowType,
    expiresInDays: fields.expiresInDays,
    reminders: fields.reminders,
    allowDelegation: fields.allowDelegation,
    cc: fields.cc,
    roles: fields.roles,
    file: { key: file.key, name: file.name, size: file.size, sha256: file.sha256, pageCount: file.pageCount },
  };
}

/** A new template at version 1. The file is in storage already; on failure the caller removes it. */
export async function createTemplate(
  db: Knex,
  input: { id: string; accountId: string; fields: TemplateFields; file: DocumentFile },
): Promise<TemplateWithVersion> {
  const details = rolePlacementDetails(input.fields.roles, input.file.pageCount);
  if (Object.keys(details).length) throw AppError.validation(details);
  return db.transaction((trx) =>
    templateStore(trx).insert(
      { id: input.id, accountId: input.accountId },
      versionFrom(input.id, 1, input.fields, input.file),
    ),
  );
}

export const ARCHIVED_REFUSAL = (t: Template) =>
  `Template ${t.id} is archived; it makes no new documents or versions`;

/**
 * Makes the next version from the current one with the given fields (and file) replaced; earlier versions stay as
 * they were, for the documents made from them. Under the template's row lock, so two updates make two versions.
 */
export async function updateTemplate(
  db: Knex,
  input: { accountId: string; id: string; update: TemplateUpdate; file?: DocumentFile },
): Promise<TemplateWithVersion> {
  return db.transaction(async (trx) => {
    const store = templateStore(trx);
    const template = await store.findById(input.accountId, input.id, { forUpdate: true });
    if (!template) throw AppError.notFound('Template');
    if (template.archivedAt) throw AppError.conflict('template_archived', ARCHIVED_REFUSAL(template));
    const current = (await store.findVersion(template.id, template.currentVersion))!;
    const fields: TemplateFields = { ...fieldsOf(current), ...input.update };
    const file = input.file ?? { ...current.file };
    const details = rolePlacementDetails(fields.roles, file.pageCount);
    if (Object.keys(details).length) {
      if (input.file && !input.update.roles)
        throw AppError.validation({
          file: [
            `The new PDF has ${file.pageCount} pages; a role is placed beyond them (${Object.values(details).flat().join('; ')})`,
          ],
        });
      throw AppError.validation(details);
    }
    return store.addVersion(input.accountId, versionFrom(template.id, current.version + 1, fields, file));
  });
}

function fieldsOf(v: TemplateVersion): TemplateFields {
  return {
    titleAr: v.titleAr,
    titleEn: v.titleEn,
    department: v.department,
    workflowType: v.workflowType,
    expiresInDays: v.expiresInDays,
    reminders: v.reminders,
    allowDelegation: v.allowDelegation,
    cc: v.cc,
    roles: v.roles,
  };
}

export async function archiveTemplate(
  db: Knex,
  input: { accountId: string; id: string },
): Promise<TemplateWithVersion> {
  const store = templateStore(db);
  const template = await store.archive(input.accountId, input.id);
  if (!template) throw AppError.notFound('Template');
  return { template, version: (await store.findVersion(template.id, template.currentVersion))! };
}

/** The template with its current version, or 404; `usable` also refuses an archived one (409). */
export async function loadTemplate(
  db: Knex,
  input: { accountId: string; id: string; usable?: boolean },
): Promise<TemplateWithVersion> {
  const found = await templateStore(db).findWithVersion(input.accountId, input.id);
  if (!found) throw AppError.notFound('Template');
  if (input.usable && found.template.archivedAt)
    throw AppError.conflict('template_archived', ARCHIVED_REFUSAL(found.template));
  return found;
}

/** Newest first, each at its current version; `archived` lists the archived ones instead of the others. */
export async function listTemplates(
  db: Knex,
  accountId: string,
  options: { archived: boolean; limit: number; offset: number },
): Promise<{ items: TemplateWithVersion[]; total: number }> {
  return templateStore(db).list(accountId, options);
}
