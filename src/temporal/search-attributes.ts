import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes an operator filters by in the Temporal UI (`DocumentStatus = "pending"`). */
export const DocumentStatusKey = defineSearchAttributeKey('DocumentStatus', SearchAttributeType.KEYWORD);
export const DocumentReferenceKey = defineSearchAttributeKey(
  'DocumentReference',
  SearchAttributeType.KEYWORD,
);
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);

/**
 * What an approval workflow waits on an operator for: `finalization` (the final PDF failed for good) or the name of
 * a read-model write that exhausted its retry policy; absent otherwise. `ApprovalAttention IS NOT NULL` lists every
 * workflow `documents:retry-finalization` can resume.
 */
export const ApprovalAttentionKey = defineSearchAttributeKey(
  'ApprovalAttention',
  SearchAttributeType.KEYWORD,
);

export const SEARCH_ATTRIBUTE_KEYS = [
  DocumentStatusKey,
  DocumentReferenceKey,
  AccountIdKey,
  ApprovalAttentionKey,
] as const;
