import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, QueryCommandInput, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { commitWrite } from '#shared/runtime/outcome.ts';
import type { CardChange, CardUpdates, StoredCard, UpdateSource } from '#shared/domain/account-updater/ports.ts';
import { Conflict } from '#shared/domain/errors.ts';
import type { IdempotencyCompletion } from '#shared/domain/idempotency.ts';
import { fingerprintOf } from '#shared/domain/paymethods/fingerprints.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { NewPaymethod, Page, PageRequest, PaymethodQuery, PaymethodRepository } from '#shared/domain/paymethods/ports.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { batchGet } from './batch.ts';
import { assertWithinRange, decodeCursor, encodeCursor, queryFingerprint } from './cursor.ts';
import { idempotencyCompletionWrite, idempotencyKeyLost } from './idempotency.ts';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, auReportPartition, auShards, keys } from './keys.ts';
import { mergeSorted } from './merge-sorted.ts';
import type { PagedList } from './page-boundaries.ts';
import { PageBoundaries, collect } from './page-boundaries.ts';
import { AU_SOURCE_ATTRIBUTE, PAYMETHOD_ENTITY, SECRET_ATTRIBUTE, paymethodFromItem } from './records.ts';
import { cancellationReasons, isConditionFailure } from './write-conflicts.ts';
import type { IndexName, IndexStandIns, RetiredIndexName } from '../platform/table.ts';
import { GLOBAL_SECONDARY_INDEXES, indexProjection, parseIndexStandIns, RETIRED_INDEXES, TABLE_KEY } from '../platform/table.ts';

type Item = Record<string, unknown>;
type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

const MAX_WRITE_ATTEMPTS = 3;
/**
 * Times a flagged create may find only former holders in its way and go
 * again without spending an attempt: each time, they were taken out, or one
 * of them changed while the check read it.
 */
const MAX_FORMER_HOLDER_RELEASES = 5;
/** Members of a duplicate-scope entry read at once: the first holder is almost always among the first few. */
const HOLDER_READ = 10;
/** TransactWriteItems' limit of items per call. */
const TRANSACTION_ITEMS = 100;
/**
 * The default pointer's count of the customer's paymethods, kept by every
 * create, delete and move in the same commit.
 */
const PAYMETHOD_COUNT = 'paymethod_count';
/**
 * How long the leaving default waits, between reads of the customer index,
 * for a paymethod its pointer counts and the index does not show yet: a
 * global secondary index usually follows its table within a second.
 */
const CUSTOMER_INDEX_LAG_WAITS_MS = [50, 100, 200, 400, 800];

/** A customer's default pointer as read: its key, the default's token, and the customer's paymethods. */
interface DefaultPointer {
  key: Item;
  holder: string;
  count: number;
  /** False for a pointer written before counts were kept: `count` is then the customer index's. */
  counted: boolean;
}

/** The condition that a pointer is still as it was read. */
function unchanged(pointer: DefaultPointer): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  return pointer.counted
    ? { ConditionExpression: 'paymethod_token = :holder AND #count = :read', ExpressionAttributeNames: { '#count': PAYMETHOD_COUNT }, ExpressionAttributeValues: { ':holder': pointer.holder, ':read': pointer.count } }
    : { ConditionExpression: 'paymethod_token = :holder AND attribute_not_exists(#count)', ExpressionAttributeNames: { '#count': PAYMETHOD_COUNT }, ExpressionAttributeValues: { ':holder': pointer.holder } };
}

/** An Account Updater change whose commit is a transaction: its card update and its new duplicate-scope entry. */
interface JoiningChange {
  index: number;
  items: TransactItem[];
}

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

/** The full item as stored; exported only for tests and benchmarks that seed tables in bulk with the real layout. */
export function paymethodItem(record: Paymethod, secret: SealedSecret | undefined): Item {
  return { ...paymethodItemKeys(record), entity: PAYMETHOD_ENTITY, ...record, ...(secret ? { [SECRET_ATTRIBUTE]: secret } : {}) };
}

type ScopedRecord = Pick<Paymethod, 'paymethod_token' | 'organization_id' | 'location_id' | 'customer_token' | 'card' | 'echeck'>;

/** A record's duplicate scope: its customer, else its location's (or, locationless, the organization's) paymethods without a customer. */
export function duplicateScopeOf(record: Pick<Paymethod, 'location_id' | 'customer_token'>): string {
  if (record.customer_token) return `CST#${record.customer_token}`;
  return record.location_id ? `LOC#${record.location_id}` : 'ORG';
}

/** The duplicate-scope item's string set of paymethod tokens. */
const DUPLICATE_SCOPE_TOKENS = 'tokens';

/** The duplicate-scope item's key for the record's fingerprint; undefined for records without one. */
function duplicateScopeKey(record: ScopedRecord): Item | undefined {
  const fingerprint = fingerprintOf(record);
  return fingerprint ? keys.duplicateScope(record.organization_id, duplicateScopeOf(record), fingerprint) : undefined;
}

/** The duplicate-scope item of a record alone in its set; exported only for benchmarks that seed tables in bulk, like paymethodItem. */
export function duplicateScopeItem(record: ScopedRecord): Item | undefined {
  const key = duplicateScopeKey(record);
  return key ? { ...key, [DUPLICATE_SCOPE_TOKENS]: new Set([record.paymethod_token]) } : undefined;
}

/**
 * Adds the record to (or removes it from) the set of paymethods holding its fingerprint
 * in its duplicate scope; undefined for records without a fingerprint (vendors, or
 * records the backfill has not reached, which are in no set yet). `refuseIfTaken` makes
 * the write fail when the set already has a member: the atomic duplicate check.
 */
export function duplicateScopeWrite(tableName: string, record: ScopedRecord, change: 'ADD' | 'DELETE', refuseIfTaken = false): TransactItem | undefined {
  const key = duplicateScopeKey(record);
  if (!key) return undefined;
  return {
    Update: {
      TableName: tableName,
      Key: key,
      UpdateExpression: `${change} #tokens :token`,
      ...(refuseIfTaken ? { ConditionExpression: 'attribute_not_exists(#tokens)' } : {}),
      ExpressionAttributeNames: { '#tokens': DUPLICATE_SCOPE_TOKENS },
      ExpressionAttributeValues: { ':token': new Set([record.paymethod_token]) },
    },
  };
}

/** The writes that move a record from one duplicate scope or fingerprint to another; none when neither changes. */
function duplicateScopeMove(tableName: string, before: ScopedRecord, after: ScopedRecord): TransactItem[] {
  const same = duplicateScopeOf(before) === duplicateScopeOf(after) && fingerprintOf(before) === fingerprintOf(after);
  if (same) return [];
  return [duplicateScopeWrite(tableName, before, 'DELETE'), duplicateScopeWrite(tableName, after, 'ADD')].filter((item): item is TransactItem => item !== undefined);
}

export interface QueryPlan {
  index: IndexName;
  partitionAttribute: string;
  sortAttribute: string;
  partition: string;
  /** Write-sharded indexes: every partition to merge (newest first); absent for a single partition. */
  shards?: string[];
  from?: string;
  to?: string;
  filters: Array<{ attribute: string; value: string }>;
}

/**
 * Picks the index that serves a list (see docs/data-model.md): the Account
 * Updater range first (sparse indexes keyed by au_updated_date), then the
 * narrowest partition among customer, merchant customer id, location and
 * organization. Remaining filters only thin out that partition, so a page
 * never reads other customers', locations' or organizations' items.
 */
export function planQuery(query: PaymethodQuery): QueryPlan {
  const org = query.organizationId;
  const extra = (entries: Array<[string, string | undefined]>) =>
    entries.filter((entry): entry is [string, string] => entry[1] !== undefined).map(([attribute, value]) => ({ attribute, value }));
  const index = (name: IndexName) => GLOBAL_SECONDARY_INDEXES.find((candidate) => candidate.indexName === name)!;
  const plan = (name: IndexName, partition: string, filters: QueryPlan['filters'], range: Pick<QueryPlan, 'from' | 'to'> = {}): QueryPlan => ({
    index: name,
    partitionAttribute: index(name).partitionKey,
    sortAttribute: index(name).sortKey,
    partition,
    filters,
    ...range,
  });
  const type: Array<[string, string | undefined]> = [['paymethod_type', query.paymethodType]];
  // The fingerprint's partition is the narrowest; on other indexes it filters on its own index key.
  const byFingerprint = query.fingerprint === undefined ? undefined : keys.paymethodByFingerprint(org, query.fingerprint, '', '').gsi7pk;
  if (byFingerprint !== undefined && query.auUpdatedFrom === undefined && query.auUpdatedTo === undefined) {
    return plan('gsi13', byFingerprint, extra([['location_id', query.locationId], ['customer_token', query.customerToken], ['customer_id', query.customerId], ...type]));
  }
  if (byFingerprint !== undefined) type.push(['gsi7pk', byFingerprint]);
  if (query.auUpdatedFrom !== undefined || query.auUpdatedTo !== undefined) {
    // Stored dates are full ISO instants; "\uffff" makes the end second inclusive of its milliseconds.
    const range = { from: query.auUpdatedFrom, to: query.auUpdatedTo === undefined ? undefined : `${query.auUpdatedTo}\uffff` };
    const filters = extra([['customer_token', query.customerToken], ['customer_id', query.customerId], ...type]);
    const location = query.locationId;
    const shards = auShards().map((shard) => auReportPartition(org, location, shard));
    return { ...plan(location ? 'gsi11' : 'gsi10', auReportPartition(org, location, undefined), filters, range), shards };
  }
  if (query.customerToken) {
    return plan('gsi3', keys.paymethodByCustomer(org, query.customerToken, '', '').gsi3pk, extra([['location_id', query.locationId], ['customer_id', query.customerId], ...type]));
  }
  if (query.customerId) return plan('gsi12', keys.paymethodByCustomerId(org, query.customerId, '', '').gsi6pk, extra([['location_id', query.locationId], ...type]));
  if (query.locationId) return plan('gsi8', keys.paymethodByLocation(org, query.locationId, '', '').gsi8pk, extra(type));
  return plan('gsi9', keys.paymethodByOrganization(org, '', '').gsi9pk, extra(type));
}

/**
 * Whether an item, as the table holds it, answers the plan's Query: one of its
 * partitions, its sort key within the range, every filter. An index lags its
 * table, so a record read after its index entry may have moved (another
 * customer_id, a later Account Updater date, a new fingerprint).
 */
export function answersPlan(item: Item, plan: QueryPlan): boolean {
  const sortValue = item[plan.sortAttribute];
  return (
    (plan.shards ?? [plan.partition]).includes(item[plan.partitionAttribute] as string) &&
    typeof sortValue === 'string' &&
    (plan.from === undefined || sortValue >= plan.from) &&
    (plan.to === undefined || sortValue <= plan.to) &&
    plan.filters.every((filter) => item[filter.attribute] === filter.value)
  );
}

function duplicatePaymethod(record: Paymethod, existing: string): Conflict {
  const field = `${record.card ? 'card' : 'echeck'}.account_number`;
  return new Conflict('DUPLICATE_PAYMETHOD', `duplicate of paymethod ${existing}`, [{ field, message: `is already on file as paymethod ${existing}` }]);
}

export class DynamoPaymethodStore implements PaymethodRepository, CardUpdates {
  private readonly pageBoundaries: PageBoundaries;

  private indexStandIns: IndexStandIns | undefined;

  /**
   * @param indexStandInsSetting retired indexes to read in place of successors
   * the table does not have or cannot serve yet (still being filled), as
   * TABLE_INDEX_STAND_INS names them: only while
   * a deployed stack is upgraded (shared/platform/table.ts `RETIRED_INDEXES`). The plan, and
   * so every cursor, keeps the successor's name.
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly indexStandInsSetting?: string,
  ) {
    this.pageBoundaries = new PageBoundaries(client, tableName);
  }

  async get(paymethodToken: string): Promise<Paymethod | undefined> {
    const item = await this.getItem(keys.paymethod(paymethodToken));
    return item ? paymethodFromItem(item) : undefined;
  }

  async sealedNumber(paymethodToken: string): Promise<SealedSecret | undefined> {
    // The number never changes once sealed (an update cannot send one), so any copy of the item will do.
    const result = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.paymethod(paymethodToken), ProjectionExpression: '#secret', ExpressionAttributeNames: { '#secret': SECRET_ATTRIBUTE } }),
    );
    return result.Item?.[SECRET_ATTRIBUTE] as SealedSecret | undefined;
  }

  async create(
    record: NewPaymethod,
    secret: SealedSecret | undefined,
    options: { consumeOneTimeToken?: string; now: Date; completion?: IdempotencyCompletion<Paymethod>; failOnDuplicate?: boolean },
  ): Promise<Paymethod> {
    let releases = 0;
    for (let attempt = 1; ; attempt += 1) {
      const joined = await this.joinCustomer(record);
      const transaction: TransactItem[] = [...joined.items];
      const paymethod: Paymethod = { ...record, is_default: joined.isDefault, version: 1 };
      transaction.push({ Put: { TableName: this.tableName, Item: paymethodItem(paymethod, secret), ConditionExpression: 'attribute_not_exists(pk)' } });
      const duplicateIndex = transaction.length;
      const membership = duplicateScopeWrite(this.tableName, paymethod, 'ADD', options.failOnDuplicate === true);
      if (membership) transaction.push(membership);
      const ottIndex = transaction.length;
      if (options.consumeOneTimeToken) {
        transaction.push({
          Update: {
            TableName: this.tableName,
            Key: keys.oneTimeToken(options.consumeOneTimeToken),
            UpdateExpression: 'SET consumed_at = :now, consumed_by = :paymethod',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(consumed_at)',
            ExpressionAttributeValues: { ':now': options.now.toISOString(), ':paymethod': record.paymethod_token },
          },
        });
      }
      const idempotencyIndex = transaction.length;
      const completion = options.completion && idempotencyCompletionWrite(this.tableName, options.completion, paymethod);
      if (completion) transaction.push(completion.item);
      const outcome = await this.transact(transaction);
      if (outcome === 'ok') {
        if (completion) options.completion?.committed(completion.response);
        return paymethod;
      }
      if (completion && outcome[idempotencyIndex] === 'ConditionalCheckFailed') throw idempotencyKeyLost();
      const tokenUsed = options.consumeOneTimeToken !== undefined && outcome[ottIndex] === 'ConditionalCheckFailed';
      if (membership && outcome[duplicateIndex] === 'ConditionalCheckFailed') {
        const existing = await this.holderOf(paymethod);
        if (existing) throw duplicatePaymethod(paymethod, existing);
        // Only former holders were in the way: not a lost race, so the create goes again without spending an attempt.
        if (!tokenUsed && releases < MAX_FORMER_HOLDER_RELEASES) {
          releases += 1;
          attempt -= 1;
          continue;
        }
      }
      if (tokenUsed) {
        throw new Conflict('ONE_TIME_TOKEN_USED', 'the one-time token has already been used');
      }
      // The customer's default changed under us (or a transaction conflict): decide again.
      if (attempt >= MAX_WRITE_ATTEMPTS) throw new Conflict('CONCURRENT_MODIFICATION', 'the customer was modified concurrently; retry');
    }
  }

  async update(current: Paymethod, next: Paymethod): Promise<Paymethod> {
    for (let attempt = 1; ; attempt += 1) {
      const transaction: TransactItem[] = [];
      let updated: Paymethod = { ...next, version: current.version + 1 };
      if (next.customer_token !== current.customer_token) {
        transaction.push(...(await this.leaveCustomer(current)));
        const joined = await this.joinCustomer({ ...next, paymethod_token: current.paymethod_token });
        transaction.push(...joined.items);
        updated = { ...updated, is_default: joined.isDefault };
      }
      transaction.push(...duplicateScopeMove(this.tableName, current, updated));
      const ownIndex = transaction.length;
      transaction.push({ Update: this.overwrite(current, updated) });
      const outcome = await this.transact(transaction);
      if (outcome === 'ok') return updated;
      if (outcome[ownIndex] === 'ConditionalCheckFailed') throw this.lostRace(current);
      if (attempt >= MAX_WRITE_ATTEMPTS) throw new Conflict('CONCURRENT_MODIFICATION', 'the paymethod was modified concurrently; retry');
    }
  }

  async delete(current: Paymethod): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const transaction = await this.leaveCustomer(current);
      const membership = duplicateScopeWrite(this.tableName, current, 'DELETE');
      if (membership) transaction.push(membership);
      const ownIndex = transaction.length;
      transaction.push({
        Delete: { TableName: this.tableName, Key: keys.paymethod(current.paymethod_token), ConditionExpression: '#version = :version', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': current.version } },
      });
      const outcome = await this.transact(transaction);
      if (outcome === 'ok') return;
      if (outcome[ownIndex] === 'ConditionalCheckFailed') throw this.lostRace(current);
      if (attempt >= MAX_WRITE_ATTEMPTS) throw new Conflict('CONCURRENT_MODIFICATION', 'the paymethod was modified concurrently; retry');
    }
  }

  /**
   * Cards as the Account Updater needs them: strongly consistent, in batches
   * of up to 100 tokens, with the sealed number (to compare a row's number)
   * and the file line that last changed each card. Unknown tokens are absent.
   */
  async findCards(tokens: readonly string[]): Promise<Map<string, StoredCard>> {
    const found = new Map<string, StoredCard>();
    for (const item of await this.getPaymethodItems(tokens, true)) {
      const paymethod = paymethodFromItem(item);
      const secret = item[SECRET_ATTRIBUTE] as SealedSecret | undefined;
      const source = item[AU_SOURCE_ATTRIBUTE] as UpdateSource | undefined;
      found.set(paymethod.paymethod_token, { paymethod, ...(secret ? { secret } : {}), ...(source ? { source } : {}) });
    }
    return found;
  }

  /** Paymethod items by token (batchGet); unknown tokens, and items of another kind, are absent. */
  private async getPaymethodItems(tokens: readonly string[], consistentRead: boolean): Promise<Item[]> {
    const found = await batchGet(this.client, this.tableName, [...new Set(tokens)].map((token) => keys.paymethod(token)), { consistentRead });
    return found.filter((item) => item.entity === PAYMETHOD_ENTITY);
  }

  /**
   * Account Updater rows' commits. Each change is its own commit point: one
   * UpdateItem of the card, conditioned on the version read (and still a
   * card), that sets the card, the new sealed number, the file line it came
   * from and the sparse report index keys; everything the report and the
   * history need is on the card after it. A new number also adds the card to
   * its new fingerprint's duplicate-scope entry in the same commit, so those
   * changes are transactions: the ones passed together share TransactWriteItems calls
   * (no item twice in one, at most 100 items), one round trip for many rows
   * instead of one each. 'conflict' for a change whose card changed or went
   * away.
   */
  async applyAccountUpdates(changes: readonly CardChange[]): Promise<Array<'applied' | 'conflict'>> {
    const outcomes = new Array<'applied' | 'conflict'>(changes.length);
    const joining: JoiningChange[] = [];
    const updates: Array<Promise<void>> = [];
    changes.forEach((change, index) => {
      const { update, scopeJoin } = this.accountUpdateWrite(change);
      if (scopeJoin) joining.push({ index, items: [{ Update: update }, scopeJoin] });
      else updates.push(this.updateCard(update).then((outcome) => void (outcomes[index] = outcome)));
    });
    // Every write settles before a failure is reported: the caller's retry starts from a settled store.
    const settled = await Promise.allSettled([...updates, this.commitJoining(joining, outcomes)]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return outcomes;
  }

  /** The card's conditional update for one change, and the duplicate-scope entry its new fingerprint joins. */
  private accountUpdateWrite({ current, card, secret, source, updatedAt }: CardChange) {
    const next: Paymethod = { ...current, card, updated_at: updatedAt, version: current.version + 1 };
    const names: Record<string, string> = { '#version': 'version', '#type': 'paymethod_type' };
    const values: Record<string, unknown> = { ':expected': current.version, ':card': 'card' };
    const attributes: Item = {
      card: next.card,
      updated_at: next.updated_at,
      version: next.version,
      [AU_SOURCE_ATTRIBUTE]: source,
      ...(secret ? { [SECRET_ATTRIBUTE]: secret } : {}),
      ...keys.paymethodAuByOrganization(current.organization_id, card.au_updated_date!, current.paymethod_token),
      ...(current.location_id ? keys.paymethodAuByLocation(current.organization_id, current.location_id, card.au_updated_date!, current.paymethod_token) : {}),
      // A new number's fingerprint moves its filter key with it.
      ...(card.fingerprint ? keys.paymethodByFingerprint(current.organization_id, card.fingerprint, current.created_at, current.paymethod_token) : {}),
    };
    const sets = Object.entries(attributes).map(([name, value], index) => {
      names[`#s${index}`] = name;
      values[`:s${index}`] = value;
      return `#s${index} = :s${index}`;
    });
    // A later line of a file that puts back the number from before it, on a card that had no fingerprint
    // then, takes away the fingerprint the earlier line's number brought, and its filter key.
    const fingerprintRemoved = fingerprintOf(current) !== undefined && card.fingerprint === undefined;
    const removed = [...LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, ...(fingerprintRemoved ? Object.keys(keys.paymethodByFingerprint('', '', '', '')) : [])];
    const update = {
      TableName: this.tableName,
      Key: keys.paymethod(current.paymethod_token),
      // Never a list key: the location and organization lists (gsi8/gsi9) project nothing this write
      // changes, so it writes no entry of theirs; an item from before they existed leaves gsi1/gsi2 here.
      UpdateExpression: `SET ${sets.join(', ')} REMOVE ${removed.join(', ')}`,
      ConditionExpression: '#version = :expected AND #type = :card',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
    // Only a new number changes the fingerprint. The card joins its new entry in the same commit, so every
    // entry always names every card holding its fingerprint; it does not leave the old one, which keeps the
    // bulk path's row at two items. The duplicate check tells such former holders apart (holderOf).
    const scopeJoin = fingerprintOf(next) === fingerprintOf(current) ? undefined : duplicateScopeWrite(this.tableName, next, 'ADD');
    return { update, scopeJoin };
  }

  private async updateCard(update: NonNullable<TransactItem['Update']>): Promise<'applied' | 'conflict'> {
    try {
      await this.client.send(new UpdateCommand(update));
      return 'applied';
    } catch (error) {
      if (isConditionFailure(error)) return 'conflict';
      throw error;
    }
  }

  /**
   * Commits changes that join a duplicate-scope entry, several to a
   * transaction, one transaction at a time (those of one call share items
   * only when they had to be split). A cancelled transaction names the items
   * that caused it: a change with one of them is a 'conflict' (its card
   * changed, or another transaction held one of its items); the others did
   * nothing and go again.
   */
  private async commitJoining(joining: readonly JoiningChange[], outcomes: Array<'applied' | 'conflict'>): Promise<void> {
    for (let pending = joining; pending.length > 0; ) {
      const again: JoiningChange[] = [];
      for (const group of sharedTransactions(pending)) {
        const outcome = await this.transact(group.flatMap((change) => change.items));
        if (outcome === 'ok') {
          for (const change of group) outcomes[change.index] = 'applied';
          continue;
        }
        let offset = 0;
        const before = again.length;
        for (const change of group) {
          const causes = outcome.slice(offset, (offset += change.items.length)).filter((code) => code !== undefined && code !== 'None');
          if (causes.length === 0) again.push(change);
          else if (causes.every((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) outcomes[change.index] = 'conflict';
          else throw new Error(`Account Updater write cancelled: ${causes.join(', ')}`);
        }
        if (again.length - before === group.length) throw new Error('Account Updater transaction cancelled with no item named as the cause');
      }
      pending = again;
    }
  }

  async list(query: PaymethodQuery, page: PageRequest): Promise<Page<Paymethod>> {
    const plan = planQuery(query);
    // A successor orders its partitions as the index it replaced (the same keys): a cursor issued before the upgrade still holds.
    const sortedLike = RETIRED_INDEXES.find((retired) => retired.successor === plan.index)?.indexName ?? plan.index;
    const fingerprint = queryFingerprint([sortedLike, plan.partition, plan.from, plan.to, plan.filters]);
    const position = page.cursor === undefined ? undefined : decodeCursor(page.cursor, fingerprint, page);
    if (position) assertWithinRange(position, plan);
    // A write-sharded index (the Account Updater report) is its shards merged, paged like any other list.
    const list: PagedList = plan.shards
      ? this.mergedShards(plan, plan.shards, fingerprint)
      : {
          fingerprint: `mth-${fingerprint}`,
          queryOnePage: async ({ startKey, limit, ascending }) => {
            const result = await this.query(plan, limit, startKey, ascending);
            return { items: result.Items ?? [], lastEvaluatedKey: result.LastEvaluatedKey };
          },
          positionOf: (item) => ({ ...keys.paymethod(item.paymethod_token as string), [plan.partitionAttribute]: plan.partition, [plan.sortAttribute]: item[plan.sortAttribute] }),
          sortValueOf: (item) => item[plan.sortAttribute] as string,
        };
    // one more than the page tells whether a next page exists
    let collected: Item[];
    if (position) {
      const startKey = list.positionOf({ paymethod_token: position.token, [plan.sortAttribute]: position.sortValue });
      collected = (await collect(list.queryOnePage, startKey, page.pageSize + 1)).items;
    } else {
      collected = await this.pageBoundaries.readBarePage(list, page.pageIndex, page.pageSize);
    }

    return this.pageOf(collected, page, plan, fingerprint);
  }

  /**
   * A page from the index entries read (the page plus one look-ahead, which
   * only decides whether a next cursor exists). Over an index that projects
   * ALL the entries are the records; over a paymethod list index (keys and
   * immutable members only) the page's items are read from the table with one
   * BatchGetItem, eventually consistent like the index itself (half the read
   * units of a strongly consistent read), and kept in the index's order. An
   * item deleted between the Query and the read is left out, and so is one
   * that no longer answers the query: a page never shows a record its
   * filters exclude.
   */
  private async pageOf(collected: Item[], page: PageRequest, plan: QueryPlan, fingerprint: string): Promise<Page<Paymethod>> {
    const entries = collected.slice(0, page.pageSize);
    let items = entries;
    if (indexProjection(this.physicalIndex(plan.index)) !== 'ALL') {
      const tokenOf = (item: Item) => item.paymethod_token as string;
      const byToken = new Map((await this.getPaymethodItems(entries.map(tokenOf), false)).map((item) => [tokenOf(item), item]));
      items = entries.flatMap((entry): Item[] => {
        const item = byToken.get(tokenOf(entry));
        return item && answersPlan(item, plan) ? [item] : [];
      });
    }
    const last = entries.at(-1);
    const nextCursor =
      collected.length > page.pageSize && last
        ? encodeCursor({ token: last.paymethod_token as string, sortValue: last[plan.sortAttribute] as string, pageIndex: page.pageIndex + 1, pageSize: page.pageSize }, fingerprint)
        : undefined;
    return { items: items.map(paymethodFromItem), ...(nextCursor ? { nextCursor } : {}) };
  }

  /**
   * A write-sharded index as one newest-first list: each shard is read in
   * order and the streams are merged on the sort key, which is unique (it ends
   * with the token), so a position is a sort value alone. A call reads each
   * shard in steps that start a little above its share of the items asked for
   * and grow, so its cost follows the items returned, not the number of
   * shards times them. Page boundaries and cursors work on it as on a single
   * partition, so a bare page_index costs about a page once its boundaries
   * are known.
   */
  private mergedShards(plan: QueryPlan, shards: readonly string[], fingerprint: string): PagedList {
    const positionOf = (item: Item) => ({ [plan.sortAttribute]: item[plan.sortAttribute] });
    return {
      fingerprint: `mth-${fingerprint}`,
      queryOnePage: async ({ startKey, limit, ascending = false }) => {
        const after = startKey?.[plan.sortAttribute] as string | undefined;
        // A shard's share of the items asked for, and half again: the write shards split one organization's cards evenly.
        const firstStep = Math.ceil((1.5 * (limit + 1)) / shards.length) + 1;
        const streams = shards.map((partition) => this.shardInOrder({ ...plan, partition }, after, ascending, firstStep));
        const items: Item[] = [];
        // One more than asked tells whether the merged list goes on.
        for await (const item of mergeSorted(streams, (candidate) => candidate[plan.sortAttribute] as string, ascending ? 'ascending' : 'descending')) {
          items.push(item);
          if (items.length > limit) break;
        }
        const page = items.slice(0, limit);
        return { items: page, lastEvaluatedKey: items.length > limit ? positionOf(page.at(-1)!) : undefined };
      },
      positionOf,
      sortValueOf: (item) => item[plan.sortAttribute] as string,
    };
  }

  /** One shard's items after `after` (exclusive) within the plan's range, in order, read in steps of `firstStep` growing twofold. */
  private async *shardInOrder(plan: QueryPlan, after: string | undefined, ascending: boolean, firstStep: number): AsyncGenerator<Item, void, undefined> {
    // The range narrowed to the far side of `after` (inclusive: the item at `after` itself is skipped below).
    const bounded = after === undefined ? plan : ascending ? { ...plan, from: plan.from === undefined || after > plan.from ? after : plan.from } : { ...plan, to: plan.to === undefined || after < plan.to ? after : plan.to };
    let startKey: Item | undefined;
    let step = firstStep;
    do {
      const result = await this.query(bounded, Math.min(step, 1000), startKey, ascending);
      for (const item of result.Items ?? []) if (item[plan.sortAttribute] !== after) yield item;
      startKey = result.LastEvaluatedKey;
      step *= 2;
    } while (startKey);
  }

  private async query(plan: QueryPlan, limit: number, startKey: Item | undefined, ascending = false) {
    const names: Record<string, string> = { '#pk': plan.partitionAttribute };
    if (plan.from !== undefined || plan.to !== undefined) names['#sk'] = plan.sortAttribute;
    const values: Record<string, unknown> = { ':pk': plan.partition };
    let keyCondition = '#pk = :pk';
    if (plan.from !== undefined && plan.to !== undefined) keyCondition += ' AND #sk BETWEEN :from AND :to';
    else if (plan.from !== undefined) keyCondition += ' AND #sk >= :from';
    else if (plan.to !== undefined) keyCondition += ' AND #sk <= :to';
    if (plan.from !== undefined) values[':from'] = plan.from;
    if (plan.to !== undefined) values[':to'] = plan.to;
    const filters = plan.filters.map((filter, index) => {
      names[`#f${index}`] = filter.attribute;
      values[`:f${index}`] = filter.value;
      return `#f${index} = :f${index}`;
    });
    const input: QueryCommandInput = {
      TableName: this.tableName,
      IndexName: this.physicalIndex(plan.index),
      KeyConditionExpression: keyCondition,
      ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: ascending, // lists are newest first; page boundaries read back towards newer items
      Limit: limit,
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    };
    return this.client.send(new QueryCommand(input));
  }

  /** The index a plan's Query reads: its own, or a retired one standing in for it (same keys, ALL). */
  private physicalIndex(index: IndexName): IndexName | RetiredIndexName {
    // Read at the first list, not in the constructor: a mistaken setting fails the lists, not every route.
    this.indexStandIns ??= parseIndexStandIns(this.indexStandInsSetting);
    return this.indexStandIns[index] ?? index;
  }

  private async getItem(key: Item, consistent = false): Promise<Item | undefined> {
    const result = await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: consistent }));
    return result.Item;
  }

  /**
   * The writes that keep `current`'s customer coherent as it leaves (a delete,
   * or a move to another customer): one paymethod fewer on the pointer, and,
   * when it was the default, the newest other paymethod as the new default,
   * or no pointer when it was the last. The pointer's exact count is what
   * makes the "last" decision safe: a create that commits between this read
   * and this commit changes the count, so this commit's condition fails and
   * the caller decides again, and a paymethod the customer index does not
   * show yet (it lags its table) is waited for, not taken for absent.
   */
  private async leaveCustomer(current: Paymethod): Promise<TransactItem[]> {
    if (!current.customer_token) return [];
    const pointer = await this.readPointer(current.organization_id, current.customer_token);
    // No pointer: a customer left without one before counts were kept; there is nothing to keep coherent.
    if (!pointer) return [];
    if (pointer.holder !== current.paymethod_token) return [this.countChange(pointer, -1)];
    const others = pointer.count - 1;
    let replacement = await this.newestOtherOf(current);
    for (const wait of CUSTOMER_INDEX_LAG_WAITS_MS) {
      if (replacement || others < 1) break;
      await sleep(wait);
      replacement = await this.newestOtherOf(current);
    }
    // Past the waits, the index is believed over the count: a pointer's first count came from the index and can
    // be off, and a customer must never be left unable to delete its last paymethod.
    if (!replacement) return [{ Delete: { TableName: this.tableName, Key: pointer.key, ...unchanged(pointer) } }];
    return [
      { Put: { TableName: this.tableName, Item: { ...pointer.key, paymethod_token: replacement.paymethod_token, [PAYMETHOD_COUNT]: Math.max(others, 1) }, ...unchanged(pointer) } },
      {
        Update: {
          TableName: this.tableName,
          Key: keys.paymethod(replacement.paymethod_token),
          UpdateExpression: 'SET is_default = :true, #version = #version + :one',
          ConditionExpression: 'customer_token = :customer',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':true': true, ':one': 1, ':customer': current.customer_token },
        },
      },
    ];
  }

  /** The write that counts `record` into its customer, and makes it the default when the customer has none. */
  private async joinCustomer(record: Pick<Paymethod, 'organization_id' | 'customer_token' | 'paymethod_token'>): Promise<{ items: TransactItem[]; isDefault: boolean }> {
    if (!record.customer_token) return { items: [], isDefault: false };
    const pointer = await this.readPointer(record.organization_id, record.customer_token);
    if (pointer) return { items: [this.countChange(pointer, 1)], isDefault: false };
    // The pointer item is the customer's "has a default" lock: only one first paymethod can create it.
    const key = keys.customerDefault(record.organization_id, record.customer_token);
    return {
      items: [{ Put: { TableName: this.tableName, Item: { ...key, paymethod_token: record.paymethod_token, [PAYMETHOD_COUNT]: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } }],
      isDefault: true,
    };
  }

  /**
   * One paymethod more or fewer on a pointer that stays as it is otherwise.
   * A counted pointer takes it with ADD, so concurrent creates and deletes of
   * the customer's other paymethods do not stand in each other's way; a
   * pointer from before counts were kept gets its first count, as read.
   */
  private countChange(pointer: DefaultPointer, change: 1 | -1): TransactItem {
    const names = { '#count': PAYMETHOD_COUNT };
    if (pointer.counted) {
      return { Update: { TableName: this.tableName, Key: pointer.key, UpdateExpression: 'ADD #count :change', ConditionExpression: 'attribute_exists(#count)', ExpressionAttributeNames: names, ExpressionAttributeValues: { ':change': change } } };
    }
    const { ConditionExpression, ExpressionAttributeValues } = unchanged(pointer);
    return {
      Update: {
        TableName: this.tableName,
        Key: pointer.key,
        UpdateExpression: 'SET #count = :count',
        ConditionExpression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...ExpressionAttributeValues, ':count': Math.max(pointer.count + change, 1) },
      },
    };
  }

  /** The customer's default pointer, strongly consistent; a pointer from before counts were kept is counted now. */
  private async readPointer(organizationId: string, customerToken: string): Promise<DefaultPointer | undefined> {
    const key = keys.customerDefault(organizationId, customerToken);
    const item = await this.getItem(key, true);
    if (!item) return undefined;
    const stored = item[PAYMETHOD_COUNT];
    const holder = item.paymethod_token as string;
    if (typeof stored === 'number') return { key, holder, count: stored, counted: true };
    return { key, holder, count: await this.countCustomerPaymethods(organizationId, customerToken), counted: false };
  }

  /** How many paymethods the customer index shows for the customer (it lags its table). */
  private async countCustomerPaymethods(organizationId: string, customerToken: string): Promise<number> {
    const plan = planQuery({ organizationId, customerToken });
    let count = 0;
    let startKey: Item | undefined;
    do {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: this.physicalIndex(plan.index),
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': plan.partitionAttribute },
          ExpressionAttributeValues: { ':pk': plan.partition },
          Select: 'COUNT',
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      count += result.Count ?? 0;
      startKey = result.LastEvaluatedKey;
    } while (startKey);
    return count;
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
  private async holderOf(record: Paymethod): Promise<string | undefined> {
    const entry = duplicateScopeKey(record)!;
    const item = await this.getItem(entry, true);
    const members = [...((item?.[DUPLICATE_SCOPE_TOKENS] as Set<string> | undefined) ?? [])].sort();
    const read = new Map<string, Paymethod>();
    for (let first = 0; first < members.length; first += HOLDER_READ) {
      const some = members.slice(first, first + HOLDER_READ);
      for (const found of await this.getPaymethodItems(some, true)) read.set(found.paymethod_token as string, paymethodFromItem(found));
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
          ? { ConditionCheck: { TableName: this.tableName, Key, ConditionExpression: '#version = :version', ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': card.version } } }
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

  /** The customer's newest paymethod other than `current`: the next default by the documented rule. */
  private async newestOtherOf(current: Paymethod): Promise<Paymethod | undefined> {
    const plan = planQuery({ organizationId: current.organization_id, customerToken: current.customer_token });
    const result = await this.query(plan, 2, undefined);
    const other = (result.Items ?? []).find((item) => item.paymethod_token !== current.paymethod_token);
    return other ? paymethodFromItem(other) : undefined;
  }

  /** SET every member and index key of `next`, REMOVE what it no longer has; checked against `current`'s version. */
  private overwrite(current: Paymethod, next: Paymethod) {
    const { pk: _pk, sk: _sk, ...wanted } = paymethodItem(next, undefined);
    const { pk: _cpk, sk: _csk, ...had } = paymethodItem(current, undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':expected': current.version };
    const sets = Object.entries(wanted).map(([name, value], index) => {
      names[`#s${index}`] = name;
      values[`:s${index}`] = value;
      return `#s${index} = :s${index}`;
    });
    const removes = [...Object.keys(had), ...LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES]
      .filter((name) => !(name in wanted))
      .map((name, index) => {
        names[`#r${index}`] = name;
        return `#r${index}`;
      });
    names['#version'] = 'version';
    return {
      TableName: this.tableName,
      Key: keys.paymethod(current.paymethod_token),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ConditionExpression: '#version = :expected',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }

  private lostRace(current: Paymethod): Error {
    return new Conflict('CONCURRENT_MODIFICATION', `paymethod ${current.paymethod_token} was modified or deleted concurrently; retry`);
  }

  /** 'ok', or the cancellation reason code of each transaction item. */
  private async transact(items: TransactItem[]): Promise<'ok' | Array<string | undefined>> {
    try {
      // The commit point of every paymethod write: a timeout after sending is OutcomeUnknown, never a plain 503.
      // The token makes the SDK's retry of an attempt that did land succeed instead of failing its own conditions.
      await commitWrite(() => this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() })));
      return 'ok';
    } catch (error) {
      const reasons = cancellationReasons(error, items.length);
      if (!reasons) throw error;
      return reasons;
    }
  }
}

/**
 * Packs changes into as few transactions as fit: each change whole in one
 * transaction, at most TRANSACTION_ITEMS items, and no item twice in one
 * (two cards in one duplicate scope can touch the same entry), which
 * DynamoDB refuses.
 */
function sharedTransactions(changes: readonly JoiningChange[]): JoiningChange[][] {
  const transactions: Array<{ changes: JoiningChange[]; items: number; keys: Set<string> }> = [];
  for (const change of changes) {
    const changeKeys = change.items.map((item) => {
      const key = (item.Update ?? item.Delete ?? item.ConditionCheck)?.Key ?? item.Put?.Item;
      return `${String(key?.[TABLE_KEY.partitionKey])}\u0000${String(key?.[TABLE_KEY.sortKey])}`;
    });
    let transaction = transactions.find((open) => open.items + change.items.length <= TRANSACTION_ITEMS && changeKeys.every((key) => !open.keys.has(key)));
    if (!transaction) transactions.push((transaction = { changes: [], items: 0, keys: new Set() }));
    transaction.changes.push(change);
    transaction.items += change.items.length;
    for (const key of changeKeys) transaction.keys.add(key);
  }
  return transactions.map((transaction) => transaction.changes);
}
