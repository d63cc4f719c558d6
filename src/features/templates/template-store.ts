import type { Db } from '../../db/knex.ts';
import type { CcRecipient, ReminderSettings, WorkflowType } from '../../domain/model.ts';
import type { Role } from './roles.ts';

export interface Template {
  id: string;
  accountId: string;
  currentVersion: number;
  archivedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One version of a template: never changed once written (documents made from it keep reading it). */
export interface TemplateVersion {
  templateId: string;
  version: number;
  titleAr: string;
  titleEn: string;
  department: string | null;
  workflowType: WorkflowType;
  expiresInDays: number;
  reminders: ReminderSettings | null;
  allowDelegation: boolean;
  cc: CcRecipient[];
  roles: Role[];
  file: { key: string; name: string | null; size: number; sha256: string; pageCount: number };
  createdAt: Date;
}

export type NewTemplateVersion = Omit<TemplateVersion, 'createdAt'>;

interface TemplateRow {
  id: string;
  account_id: string;
  current_version: number;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface VersionRow {
  template_id: string;
  version: number;
  title_ar: string;
  title_en: string;
  department: string | null;
  workflow_type: WorkflowType;
  expires_in_days: number;
  reminders: ReminderSettings | null;
  allow_delegation: boolean;
  cc: CcRecipient[];
  roles: Role[];
  file_key: string;
  file_name: string | null;
  file_size: number | string;
  file_sha256: string;
  page_count: number;
  created_at: Date;
}

const toTemplate = (r: TemplateRow): Template => ({
  id: r.id,
  accountId: r.account_id,
  currentVersion: r.current_version,
  archivedAt: r.archived_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toVersion = (r: VersionRow): TemplateVersion => ({
  templateId: r.template_id,
  version: r.version,
  titleAr: r.title_ar,
  titleEn: r.title_en,
  department: r.department,
  workflowType: r.workflow_type,
  expiresInDays: r.expires_in_days,
  reminders: r.reminders,
  allowDelegation: r.allow_delegation,
  cc: r.cc,
  roles: r.roles,
  file: {
    key: r.file_key,
    name: r.file_name,
    size: Number(r.file_size),
    sha256: r.file_sha256,
    pageCount: r.page_count,
  },
  createdAt: r.created_at,
});

const versionRow = (v: NewTemplateVersion) => ({
  template_id: v.templateId,
  version: v.version,
  title_ar: v.titleAr,
  title_en: v.titleEn,
  department: v.department,
  workflow_type: v.workflowType,
  expires_in_days: v.expiresInDays,
  // jsonb columns take JSON text (a JS array would be sent as a PostgreSQL array).
  reminders: v.reminders === null ? null : JSON.stringify(v.reminders),
  allow_delegation: v.allowDelegation,
  cc: JSON.stringify(v.cc),
  roles: JSON.stringify(v.roles),
  file_key: v.file.key,
  file_name: v.file.name,
  file_size: v.file.size,
  file_sha256: v.file.sha256,
  page_count: v.file.pageCount,
});

/** A template with its current version. */
export interface TemplateWithVersion {
  template: Template;
  version: TemplateVersion;
}

/** Templates found one at a time, with a version, or a page of them at their current versions. */
function templateReads(db: Db) {
  return {
    async findById(
      accountId: string,
      id: string,
      options: { forUpdate?: boolean } = {},
    ): Promise<Template | undefined> {
      const query = db<TemplateRow>('templates').where({ id, account_id: accountId });
      const row = await (options.forUpdate ? query.forUpdate() : query).first();
      return row && toTemplate(row);
    },

    async findWithVersion(accountId: string, id: string): Promise<TemplateWithVersion | undefined> {
      const template = await this.findById(accountId, id);
      if (!template) return undefined;
      const version = await this.findVersion(id, template.currentVersion);
      return version && { template, version };
    },

    async findVersion(templateId: string, version: number): Promise<TemplateVersion | undefined> {
      const row = await db<VersionRow>('template_versions')
        .where({ template_id: templateId, version })
        .first();
      return row && toVersion(row);
    },

    /** Newest first; `archived` picks the archived templates instead of the others. */
    async list(
      accountId: string,
      options: { archived: boolean; limit: number; offset: number },
    ): Promise<{ items: TemplateWithVersion[]; total: number }> {
      const base = db('templates')
        .where('templates.account_id', accountId)
        .modify((q) => {
          if (options.archived) void q.whereNotNull('templates.archived_at');
          else void q.whereNull('templates.archived_at');
        });
      const [{ total }] = (await base.clone().count<{ total: number | string }[]>({ total: '*' })) as [
        { total: number | string },
      ];
      const rows = await base
        .clone()
        .join('template_versions as v', function () {
          this.on('v.template_id', 'templates.id').andOn('v.version', 'templates.current_version');
        })
        .orderBy([
          { column: 'templates.created_at', order: 'desc' },
          { column: 'templates.id', order: 'desc' },
        ])
        .limit(options.limit)
        .offset(options.offset)
        .select<(TemplateRow & Omit<VersionRow, 'created_at'> & { version_created_at: Date })[]>(
          'templates.*',
          'v.template_id',
          'v.version',
          'v.title_ar',
          'v.title_en',
          'v.department',
          'v.workflow_type',
          'v.expires_in_days',
          'v.reminders',
          'v.allow_delegation',
          'v.cc',
          'v.roles',
          'v.file_key',
          'v.file_name',
          'v.file_size',
          'v.file_sha256',
          'v.page_count',
          'v.created_at as version_created_at',
        );
      return {
        total: Number(total),
        items: rows.map((r) => ({
          template: toTemplate(r),
          version: toVersion({ ...r, created_at: r.version_created_at }),
        })),
      };
    },
  };
}

/** New templates, their next versions, and archiving. */
function templateWrites(db: Db) {
  return {
    async insert(
      template: { id: string; accountId: string },
      first: NewTemplateVersion,
    ): Promise<TemplateWithVersion> {
      const [row] = await db<TemplateRow>('templates')
        .insert({ id: template.id, account_id: template.accountId, current_version: first.version })
        .returning('*');
      const [version] = await db('template_versions').insert(versionRow(first)).returning<VersionRow[]>('*');
      return { template: toTemplate(row!), version: toVersion(version!) };
    },

    /** Writes the next version and makes it current (the caller holds the template's row lock). */
    async addVersion(accountId: string, next: NewTemplateVersion): Promise<TemplateWithVersion> {
      const [version] = await db('template_versions').insert(versionRow(next)).returning<VersionRow[]>('*');
      const [row] = await db<TemplateRow>('templates')
        .where({ id: next.templateId, account_id: accountId })
        .update({ current_version: next.version, updated_at: db.fn.now() as unknown as Date })
        .returning('*');
      return { template: toTemplate(row!), version: toVersion(version!) };
    },

    async archive(accountId: string, id: string): Promise<Template | undefined> {
      const [row] = await db<TemplateRow>('templates')
        .where({ id, account_id: accountId })
        .update({
          archived_at: db.raw('coalesce(archived_at, now())') as unknown as Date,
          updated_at: db.fn.now() as unknown as Date,
        })
        .returning('*');
      return row && toTemplate(row);
    },
  };
}

/** `templates` and `template_versions`. Reads an API key can cause are scoped by account. */
export function templateStore(db: Db) {
  return { ...templateReads(db), ...templateWrites(db) };
}

export type TemplateStore = ReturnType<typeof templateStore>;
