import type {
  ActionType,
  ApproverFields,
  Language,
  Placement,
  Verification,
  WorkflowType,
} from '../../domain/model.ts';

/**
 * A role of a template: a place for a person, filled per document (`recipients.<key>`) or per bulk-send row.
 * Everything about the approver but who they are is the role's.
 */
export interface Role {
  key: string;
  labelAr: string;
  labelEn: string;
  actionType: ActionType;
  orderIndex: number;
  placement: Placement | null;
  /** Absent: the account's default when the document is made. */
  verification?: Verification;
  notify: boolean;
}

/** Who fills a role: the person's own fields; the role gives the rest. */
export interface Recipient {
  nameAr: string;
  nameEn: string;
  /** E.164 digits without the plus sign. */
  phone: string;
  roleAr: string | null;
  roleEn: string | null;
  language: Language | null;
}

/**
 * A role key: a letter, then up to 31 letters, digits or `_`. It names a field in JSON (`recipients.<key>`) and a
 * CSV column prefix (`<key>.phone`), so it is short, lowercase and never a name JavaScript objects already have.
 */
export const ROLE_KEY = /^[a-z][a-z0-9_]{0,31}$/;

/** A bulk-send row's own fields, beside its roles: no role may take their names. */
export const ROW_TITLE_FIELDS = ['title', 'title_ar', 'title_en'] as const;

/**
 * Refused as role keys: names every plain object already answers to (so no reader of ours or theirs trips), and
 * the row fields a bulk-send row has beside its roles.
 */
export function reservedRoleKey(key: string): boolean {
  return key in Object.prototype || (ROW_TITLE_FIELDS as readonly string[]).includes(key);
}

/** Recipients keyed by role key: a Map, since the keys are the client's. */
export type Recipients = ReadonlyMap<string, Recipient>;

/** The approvers of a document made from `roles`, each filled by its recipient (every role must have one). */
export function approversFor(roles: readonly Role[], recipients: Recipients): ApproverFields[] {
  return roles.map((role) => {
    const person = recipients.get(role.key);
    if (!person) throw new Error(`role ${role.key} has no recipient`);
    return {
      nameAr: person.nameAr,
      nameEn: person.nameEn,
      phone: person.phone,
      roleAr: person.roleAr,
      roleEn: person.roleEn,
      language: person.language,
      actionType: role.actionType,
      orderIndex: role.orderIndex,
      placement: role.placement,
      ...(role.verification !== undefined && { verification: role.verification }),
      notify: role.notify,
    };
  });
}

/**
 * The roles whose people WhatsApp messages at send: in a sequential document the first position's, in a parallel
 * one everyone's; never a role with `notify: false`. What a bulk-send row costs of WhatsApp's limits.
 */
export function firstNotifiedRoles(roles: readonly Role[], workflowType: WorkflowType): Role[] {
  const first = Math.min(...roles.map((r) => r.orderIndex));
  return roles.filter((r) => r.notify && (workflowType === 'parallel' || r.orderIndex === first));
}
