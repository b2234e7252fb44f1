/**
 * The paymethod item's layout, the one place it is written down: its keys
 * and every index key, the sealed number's attribute, the Account Updater's
 * source line, the record to the item and back. Every repository that reads
 * or writes a paymethod item (the protocols in paymethod-*.ts, the Account
 * Updater's card writes, the backfills) and the stream's decoder build on it;
 * it imports no DynamoDB client, so the stream reader bundles none.
 */
import { fingerprintOf } from '#shared/domain/paymethods/fingerprints.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { keys, withoutKeys } from './keys.ts';

type Item = Record<string, unknown>;

/** Attribute that holds the sealed account number; it never leaves the store. */
export const SECRET_ATTRIBUTE = 'vault';
export const PAYMETHOD_ENTITY = 'paymethod';
/** Which Account Updater file line last changed the card (not a public member). */
export const AU_SOURCE_ATTRIBUTE = 'au_source';
/**
 * The optimistic lock: every write of a paymethod is conditioned on the
 * version it read and moves it on, so a write from an older read fails.
 */
export const VERSION_ATTRIBUTE = 'version';

/** Every index key (table and GSIs) a paymethod item carries, derived from the record alone. */
export function paymethodItemKeys(record: Pick<Paymethod, 'paymethod_token' | 'organization_id' | 'location_id' | 'customer_token' | 'customer_id' | 'created_at' | 'card' | 'echeck'>): Item {
  const { paymethod_token: token, organization_id: org, location_id: loc, customer_token: cst, customer_id: cid, created_at: created } = record;
  const auDate = record.card?.au_updated_date;
  const fingerprint = fingerprintOf(record);
  return {
    ...(fingerprint ? keys.paymethodByFingerprint(org, fingerprint, created, token) : {}),
    ...keys.paymethod(token),
    ...keys.paymethodByOrganization(org, created, token),
    ...(loc ? keys.paymethodByLocation(org, loc, created, token) : {}),
    ...(cst ? keys.paymethodByCustomer(org, cst, created, token) : {}),
    ...(cid ? keys.paymethodByCustomerId(org, cid, created, token) : {}),
    ...(auDate ? keys.paymethodAuByOrganization(org, auDate, token) : {}),
    ...(auDate && loc ? keys.paymethodAuByLocation(org, loc, auDate, token) : {}),
  };
}

/** The full item as stored; tests and benchmarks that seed tables in bulk use it too, for the real layout. */
export function paymethodItem(record: Paymethod, secret: SealedSecret | undefined): Item {
  return { ...paymethodItemKeys(record), entity: PAYMETHOD_ENTITY, ...record, ...(secret ? { [SECRET_ATTRIBUTE]: secret } : {}) };
}

/** The record a paymethod item holds: keys, the entity marker, the sealed number and the AU source stay behind. */
export function paymethodFromItem(item: Item): Paymethod {
  const { [SECRET_ATTRIBUTE]: _secret, [AU_SOURCE_ATTRIBUTE]: _source, entity: _entity, ...rest } = withoutKeys(item);
  return rest as unknown as Paymethod;
}

/** The condition that the paymethod is still at `version`, as read. */
export function atVersion(version: number) {
  return { ConditionExpression: '#version = :version', ExpressionAttributeNames: { '#version': VERSION_ATTRIBUTE }, ExpressionAttributeValues: { ':version': version } };
}

/**
 * `SET` of every attribute given, as placeholders `#s<n>`/`:s<n>` added to
 * `names` and `values` (an attribute's name may be a reserved word).
 */
export function setEach(attributes: Item, names: Record<string, string>, values: Record<string, unknown>): string {
  const sets = Object.entries(attributes).map(([name, value], index) => {
    names[`#s${index}`] = name;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  return `SET ${sets.join(', ')}`;
}

/**
 * The write that makes `paymethodToken` its customer's default, on the
 * condition that it still belongs to that customer; the customer's default
 * pointer (customer-defaults.ts) names it in the same transaction.
 */
export function becomeDefault(tableName: string, paymethodToken: string, customerToken: string) {
  return {
    Update: {
      TableName: tableName,
      Key: keys.paymethod(paymethodToken),
      UpdateExpression: 'SET is_default = :true, #version = #version + :one',
      ConditionExpression: 'customer_token = :customer',
      ExpressionAttributeNames: { '#version': VERSION_ATTRIBUTE },
      ExpressionAttributeValues: { ':true': true, ':one': 1, ':customer': customerToken },
    },
  };
}
