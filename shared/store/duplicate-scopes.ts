/**
 * Duplicate-scope entries, the one owner of their layout: per organization,
 * scope and fingerprint, the set of paymethods holding that fingerprint in
 * that scope. The paymethod writes add the writes built here to their own
 * transactions, so an entry always changes in the commit of its cards.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { fingerprintOf } from '#shared/domain/paymethods/fingerprints.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { keys } from './keys.ts';
import { atVersion, paymethodFromItem } from './paymethod-item.ts';
import { paymethodItemsByToken } from './paymethod-reads.ts';
import type { TransactItem } from './write-conflicts.ts';
import { TRANSACTION_ITEMS, cancellationReasons } from './write-conflicts.ts';
import { TABLE_KEY } from '../platform/table.ts';

type Item = Record<string, unknown>;
type ScopedRecord = Pick<Paymethod, 'paymethod_token' | 'organization_id' | 'location_id' | 'customer_token' | 'card' | 'echeck'>;

/** Members of a duplicate-scope entry read at once: the first holder is almost always among the first few. */
const HOLDER_READ = 10;
/** The duplicate-scope item's string set of paymethod tokens. */
const DUPLICATE_SCOPE_TOKENS = 'tokens';

/** A record's duplicate scope: its customer, else its location's (or, locationless, the organization's) paymethods without a customer. */
export function duplicateScopeOf(record: Pick<Paymethod, 'location_id' | 'customer_token'>): string {
  if (record.customer_token) return `CST#${record.customer_token}`;
  return record.location_id ? `LOC#${record.location_id}` : 'ORG';
}

/** The duplicate-scope item's key for the record's fingerprint; undefined for records without one. */
function duplicateScopeKey(record: ScopedRecord): Item | undefined {
  const fingerprint = fingerprintOf(record);
  return fingerprint ? keys.duplicateScope(record.organization_id, duplicateScopeOf(record), fingerprint) : undefined;
}

/** The duplicate-scope item of a record alone in its set; for benchmarks that seed tables in bulk, like paymethodItem. */
export function duplicateScopeItem(record: ScopedRecord): Item | undefined {
  const key = duplicateScopeKey(record);
  return key ? { ...key, [DUPLICATE_SCOPE_TOKENS]: new Set([record.paymethod_token]) } : undefined;
}

export class DuplicateScopes {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /**
   * Adds the record to the set of paymethods holding its fingerprint in its
   * duplicate scope; undefined for records without a fingerprint (vendors, or
   * records the backfill has not reached, which are in no set yet).
   * `refuseIfTaken` makes the write fail when the set already has a member:
   * the atomic duplicate check.
   */
  join(record: ScopedRecord, refuseIfTaken = false): TransactItem | undefined {
    return this.write(record, 'ADD', refuseIfTaken);
  }

  /** Takes the record out of its set; undefined for records without a fingerprint. */
  leave(record: ScopedRecord): TransactItem | undefined {
    return this.write(record, 'DELETE', false);
  }

  /** The writes that move a record from one duplicate scope or fingerprint to another; none when neither changes. */
  move(before: ScopedRecord, after: ScopedRecord): TransactItem[] {
    const same = duplicateScopeOf(before) === duplicateScopeOf(after) && fingerprintOf(before) === fingerprintOf(after);
    if (same) return [];
    return [this.leave(before), this.join(after)].filter((item): item is TransactItem => item !== undefined);
  }

  /**
   * The paymethod holding `record`'s fingerprint in its duplicate scope
   * (strongly consistent), if any. An entry names every card holding its
   * fingerprint, and may still name cards that held it once: an Account
   * Updater new number joins its new entry without leaving the old one. So
   * members are checked against their paymethods, in token order, a few at a
   * time, up to the first that holds it; when none does any more, they are
   * taken out of the entry (releaseFormerHolders) and the caller tries its
   * write again.
   */
  async holderOf(record: Paymethod): Promise<string | undefined> {
    const entry = duplicateScopeKey(record)!;
    const { Item: item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: entry, ConsistentRead: true }));
    const members = [...((item?.[DUPLICATE_SCOPE_TOKENS] as Set<string> | undefined) ?? [])].sort();
    const read = new Map<string, Paymethod>();
    for (let first = 0; first < members.length; first += HOLDER_READ) {
      const some = members.slice(first, first + HOLDER_READ);
      for (const found of await paymethodItemsByToken(this.client, this.tableName, some, true)) read.set(found.paymethod_token as string, paymethodFromItem(found));
      const holder = some.find((token) => {
        const paymethod = read.get(token);
        return paymethod !== undefined && duplicateScopeKey(paymethod)?.pk === entry.pk;
      });
      if (holder) return holder;
    }
    if (members.length > 0) await this.releaseFormerHolders(entry, members, read);
    return undefined;
  }

  /**
   * Takes former holders out of a duplicate-scope entry, each on the
   * condition that its card is still as read (same version, or still gone):
   * a card that took the fingerprint back meanwhile joined the entry in its
   * own commit, changed its version, and so stays. A cancelled release
   * leaves the entry as it was, for the caller's next attempt to read again.
   */
  private async releaseFormerHolders(entry: Item, members: readonly string[], cards: ReadonlyMap<string, Paymethod>): Promise<void> {
    for (let first = 0; first < members.length; first += TRANSACTION_ITEMS - 1) {
      const former = members.slice(first, first + TRANSACTION_ITEMS - 1);
      const asRead: TransactItem[] = former.map((token) => {
        const card = cards.get(token);
        const Key = keys.paymethod(token);
        return card
          ? { ConditionCheck: { TableName: this.tableName, Key, ...atVersion(card.version) } }
          : { ConditionCheck: { TableName: this.tableName, Key, ConditionExpression: `attribute_not_exists(${TABLE_KEY.partitionKey})` } };
      });
      const release: TransactItem = {
        Update: { TableName: this.tableName, Key: entry, UpdateExpression: 'DELETE #tokens :former', ExpressionAttributeNames: { '#tokens': DUPLICATE_SCOPE_TOKENS }, ExpressionAttributeValues: { ':former': new Set(former) } },
      };
      try {
        await this.client.send(new TransactWriteCommand({ TransactItems: [...asRead, release] }));
      } catch (error) {
        if (cancellationReasons(error, asRead.length + 1)) return;
        throw error;
      }
    }
  }

  private write(record: ScopedRecord, change: 'ADD' | 'DELETE', refuseIfTaken: boolean): TransactItem | undefined {
    const key = duplicateScopeKey(record);
    if (!key) return undefined;
    return {
      Update: {
        TableName: this.tableName,
        Key: key,
        UpdateExpression: `${change} #tokens :token`,
        ...(refuseIfTaken ? { ConditionExpression: 'attribute_not_exists(#tokens)' } : {}),
        ExpressionAttributeNames: { '#tokens': DUPLICATE_SCOPE_TOKENS },
        ExpressionAttributeValues: { ':token': new Set([record.paymethod_token]) },
      },
    };
  }
}
