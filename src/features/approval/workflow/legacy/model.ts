/** The words of the product the legacy workflow's contract is written in, as they stood when it was frozen. */
export type DocumentStatus =
  'draft' | 'pending' | 'in_progress' | 'approved' | 'rejected' | 'expired' | 'voided';
export type WorkflowType = 'sequential' | 'parallel';
export type ActionType = 'sign' | 'stamp' | 'approve_only' | 'review_only';
export type ApproverStatus = 'waiting' | 'notified' | 'completed' | 'rejected' | 'delegated';
export type ActionKind = 'complete' | 'reject';
export type NoticeKind = 'approval_request' | 'reminder' | 'voided' | 'rejected' | 'signed_copy';

/** An action's evidence as actions carried it inline before it was stored apart (only replayed, never sent). */
export interface ActionEvidence {
  at: string;
  channel: 'whatsapp' | 'page';
  ip?: string;
  userAgent?: string;
  messageId?: string;
  imageKey?: string;
  typedName?: string;
  generatedSeal?: boolean;
  reason?: string;
  verifiedBy?: 'none' | 'whatsapp_otp' | 'whatsapp_reply';
}
