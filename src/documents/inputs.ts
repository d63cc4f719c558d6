import type { ActionType, Language, Placement, WorkflowType } from '../domain/model.ts';

/** An approver as a client gives it (validated); `orderIndex` undefined means "after the others". */
export interface ApproverInput {
  nameAr: string;
  nameEn: string;
  phone: string;
  roleAr: string | null;
  roleEn: string | null;
  language: Language | null;
  actionType: ActionType;
  orderIndex: number | undefined;
  placement: Placement | null;
}

/** PUT /approvers/{id}: only what is given changes. */
export interface ApproverUpdate {
  nameAr?: string;
  nameEn?: string;
  phone?: string;
  roleAr?: string | null;
  roleEn?: string | null;
  language?: Language | null;
  actionType?: ActionType;
  orderIndex?: number;
  /** Undefined: unchanged; null: removed. */
  placement?: Placement | null;
}

export type PositionedApproverInput = ApproverInput & { orderIndex: number };

export interface DocumentInput {
  titleAr: string;
  titleEn: string;
  department: string | null;
  workflowType: WorkflowType;
  expiresInDays: number;
  approvers: PositionedApproverInput[];
}

/** PUT /documents/{id}: only what is given changes; `approvers`, when given, replaces them all. */
export interface DocumentUpdate {
  titleAr?: string;
  titleEn?: string;
  department?: string | null;
  workflowType?: WorkflowType;
  expiresInDays?: number;
  approvers?: PositionedApproverInput[];
}

/** The original PDF, already in storage and checked. */
export interface DocumentFile {
  key: string;
  name: string | null;
  size: number;
  sha256: string;
  pageCount: number;
}
