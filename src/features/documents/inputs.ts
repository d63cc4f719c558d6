import type { ApproverFields, CcRecipient, ReminderSettings, WorkflowType } from '../../domain/model.ts';

/** An approver as a client gives it (validated); `orderIndex` undefined means "after the others". */
export type ApproverInput = Omit<ApproverFields, 'orderIndex'> & { orderIndex: number | undefined };

/** PUT /approvers/{id}: only what is given changes (a placement undefined is unchanged; null removes it). */
export type ApproverUpdate = Partial<ApproverFields>;

export interface DocumentInput {
  titleAr: string;
  titleEn: string;
  department: string | null;
  workflowType: WorkflowType;
  expiresInDays: number;
  approvers: ApproverFields[];
  /** Null: the account's default applies when the document is sent. */
  reminders: ReminderSettings | null;
  /** Approvers may hand their step to someone else from the approval page. */
  allowDelegation: boolean;
  /** Who else receives the signed copy; never an approver's number. */
  cc: CcRecipient[];
}

/** PUT /documents/{id}: only what is given changes; `approvers`, when given, replaces them all. */
export interface DocumentUpdate {
  titleAr?: string;
  titleEn?: string;
  department?: string | null;
  workflowType?: WorkflowType;
  expiresInDays?: number;
  approvers?: ApproverFields[];
  /** Null clears the document's own setting (the account's default applies). */
  reminders?: ReminderSettings | null;
  allowDelegation?: boolean;
  /** Replaces the whole list. */
  cc?: CcRecipient[];
}

/** The original PDF, already in storage and checked. */
export interface DocumentFile {
  key: string;
  name: string | null;
  size: number;
  sha256: string;
  pageCount: number;
}
