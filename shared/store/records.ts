/**
 * Items -> records for documents: what the repository returns for a stored
 * item, apart from it so that code reading items from elsewhere (the table's
 * stream) gets the same records without bundling the DynamoDB client
 * (paymethod-item.ts does the same for paymethods).
 */
import type { StoredDocument } from '#shared/domain/documents/document.ts';
import { withoutKeys } from './keys.ts';

type Item = Record<string, unknown>;

/** The record a document item holds, without its keys. */
export function documentFromItem(item: Item): StoredDocument {
  return withoutKeys(item) as unknown as StoredDocument;
}
