import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const DocumentStatusKey = defineSearchAttributeKey('DocumentStatus', SearchAttributeType.KEYWORD);
export const ApprovalAttentionKey = defineSearchAttributeKey(
  'ApprovalAttention',
  SearchAttributeType.KEYWORD,
);
