import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Search attributes an operator filters by in the Temporal UI (`DocumentStatus = "pending"`). */
export const DocumentStatusKey = defineSearchAttributeKey('DocumentStatus', SearchAttributeType.KEYWORD);
export const DocumentReferenceKey = defineSearchAttributeKey(
  'DocumentReference',
  SearchAttributeType.KEYWORD,
);
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_KEYS = [DocumentStatusKey, DocumentReferenceKey, AccountIdKey] as const;
