import type { Connection } from '@temporalio/client';
import type { Logger } from '../logger.ts';
import { SEARCH_ATTRIBUTE_KEYS } from './search-attributes.ts';

const INDEXED_VALUE_TYPE_KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType

/**
 * Registers DocumentStatus, DocumentReference and AccountId on the namespace when missing, so a fresh cluster
 * works without a manual step. Clusters that refuse (no operator rights, Temporal Cloud) get a warning with the
 * command to run instead.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  logger: Logger,
): Promise<void> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = existing.customAttributes ?? {};
    const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !(k.name in known));
    if (!missing.length) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, INDEXED_VALUE_TYPE_KEYWORD])),
    });
    logger.info({ added: missing.map((k) => k.name) }, 'registered Temporal search attributes');
  } catch (err) {
    logger.warn(
      { err },
      `could not check or register search attributes; run: ${SEARCH_ATTRIBUTE_KEYS.map(
        (k) =>
          `temporal operator search-attribute create --namespace ${namespace} --name ${k.name} --type Keyword`,
      ).join(' && ')}`,
    );
  }
}
