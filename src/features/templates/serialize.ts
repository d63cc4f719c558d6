import { isoTime } from '../../domain/time.ts';
import type { TemplateWithVersion } from './template-store.ts';

/** The API's representation of a template: its current version's fields; storage keys never appear. */
export function serializeTemplate({ template, version }: TemplateWithVersion) {
  return {
    id: template.id,
    version: version.version,
    title_ar: version.titleAr,
    title_en: version.titleEn,
    department: version.department,
    workflow_type: version.workflowType,
    expires_in_days: version.expiresInDays,
    reminders: version.reminders,
    allow_delegation: version.allowDelegation,
    cc: version.cc.map((c) => ({ phone: c.phone, language: c.language, name: c.name })),
    roles: version.roles.map((r) => ({
      key: r.key,
      label_ar: r.labelAr,
      label_en: r.labelEn,
      action_type: r.actionType,
      order_index: r.orderIndex,
      placement: r.placement && {
        page: r.placement.page,
        x: r.placement.x,
        y: r.placement.y,
        width: r.placement.width,
      },
      verification: r.verification ?? null,
      notify: r.notify,
    })),
    page_count: version.file.pageCount,
    file: { name: version.file.name, size: version.file.size, sha256: version.file.sha256 },
    archived_at: isoTime(template.archivedAt),
    created_at: isoTime(template.createdAt),
    updated_at: isoTime(template.updatedAt),
  };
}

export type SerializedTemplate = ReturnType<typeof serializeTemplate>;
