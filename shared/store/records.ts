/**
 * Items -> records: what the repositories return for a stored item, apart
 * from the repositories so that code reading items from elsewhere (the table's
 * stream) gets the same records without bundling the DynamoDB client.
 */
import type { StoredDocument } from '#shared/domain/documents/document.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { withoutKeys } from './keys.ts';

type Item = Record<string, unknown>;

/** Attribute that holds the sealed account number; it never leaves the store. */
export const SECRET_ATTRIBUTE = 'vault';
export const PAYMETHOD_ENTITY = 'paymethod';
/** Which Account Updater file line last changed the card (not a public member). */
export const AU_SOURCE_ATTRIBUTE = 'au_source';

/** The record a paymethod item holds: keys, the entity marker, the sealed number and the AU source stay behind. */
export function paymethodFromItem(item: Item): Paymethod {
  const { [SECRET_ATTRIBUTE]: _secret, [AU_SOURCE_ATTRIBUTE]: _source, entity: _entity, ...rest } = withoutKeys(item);
  return rest as unknown as Paymethod;
}

/** The record a document item holds, without its keys. */
export function documentFromItem(item: Item): StoredDocument {
  return withoutKeys(item) as unknown as StoredDocument;
}
