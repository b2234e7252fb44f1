/**
 * Webhook items in the single table (docs/data-model.md, "Webhooks"):
 * - endpoint `WHE#<org>` / `EP#<whe_id>`, and the organization's endpoint
 *   count `WHE#<org>` / `COUNT`, changed in the same transaction as a create or
 *   delete (the 16-endpoint limit); the list is one Query of that partition;
 * - a record's lane for one endpoint `WHL#<whe_id>#<record>` /
 *   `<occurred_at>#<msg_id>`: pending messages in commit order; one partition
 *   per endpoint and record, so a million-card run writes a million partitions,
 *   none hot;
 * - settled (held or failed) messages `WHH#<whe_id>#S<shard>` / `<created_at>#<msg_id>`,
 *   sharded by record like the Account Updater's keys;
 * - attempts `WHA#<whe_id>#S<shard>` / `<attempted_at>#<att_id>`, TTL 30 days,
 *   written at the endpoint's delivery rate (at most 8 at once) over 4 shards;
 * - the endpoint's delivery slots `WHS#<whe_id>#<n>` / `SLOT`.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { InvalidRequest } from '#shared/domain/errors.ts';
import type { IdempotencyCompletion } from '#shared/domain/idempotency.ts';
import type { DeliveryAttempt, MessageRef, SettledMessage, WebhookEndpoint, WebhookMessage } from '#shared/domain/webhooks/model.ts';
import { ATTEMPT_RETENTION_DAYS, ENDPOINT_CONCURRENCY } from '#shared/domain/webhooks/model.ts';
import type { AttemptPage, AttemptStore, EndpointSlots, EndpointStore, MessageStore } from '#shared/domain/webhooks/ports.ts';
import { ITEM_PARTITION_PREFIXES as P } from '#shared/platform/item-kinds.ts';
import { batchGet, batchWrite } from './batch.ts';
import { auShardOf, withoutKeys } from './keys.ts';
import { mergeSorted } from './merge-sorted.ts';
import { idempotencyCompletionWrite, idempotencyKeyLost } from './idempotency.ts';
import { isConditionFailure, transact, TRANSACTION_ITEMS } from './write-conflicts.ts';

type Item = Record<string, unknown>;

export const SETTLED_SHARDS = 8;
export const ATTEMPT_SHARDS = 4;

export const webhookKeys = {
  endpoint: (organizationId: string, endpointId: string) => ({ pk: `${P.webhookEndpoint}${organizationId}`, sk: `EP#${endpointId}` }),
  endpointCount: (organizationId: string) => ({ pk: `${P.webhookEndpoint}${organizationId}`, sk: 'COUNT' }),
  lane: (endpointId: string, recordId: string) => `${P.webhookLane}${endpointId}#${recordId}`,
  laneEntry: (message: Pick<WebhookMessage, 'webhook_endpoint_id' | 'record_id' | 'occurred_at' | 'message_id'>) => ({
    pk: webhookKeys.lane(message.webhook_endpoint_id, message.record_id),
    sk: `${message.occurred_at}#${message.message_id}`,
  }),
  settled: (message: Pick<WebhookMessage, 'webhook_endpoint_id' | 'record_id' | 'created_at' | 'message_id'>) => ({
    pk: `${P.webhookHeld}${message.webhook_endpoint_id}#S${auShardOf(message.record_id) % SETTLED_SHARDS}`,
    sk: `${message.created_at}#${message.message_id}`,
  }),
  attemptPartition: (endpointId: string, shard: number) => `${P.webhookAttempt}${endpointId}#S${shard}`,
  slot: (endpointId: string, slot: number) => ({ pk: `${P.webhookSlot}${endpointId}#${slot}`, sk: 'SLOT' }),
  parkedPartition: (endpointId: string, shard: number) => `${P.webhookParked}${endpointId}#S${shard}`,
};

/** Parked messages of one endpoint spread over this many partitions: a burst parks at the fan-out's rate. */
export const PARKED_SHARDS = 8;

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export class DynamoWebhookEndpoints implements EndpointStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(endpoint: WebhookEndpoint, limit: number, completion?: IdempotencyCompletion<WebhookEndpoint>): Promise<boolean> {
    const answered = completion ? idempotencyCompletionWrite(this.tableName, completion, endpoint) : undefined;
    const outcome = await transact(this.client, [
      {
        Update: {
          TableName: this.tableName,
          Key: webhookKeys.endpointCount(endpoint.organization_id),
          UpdateExpression: 'ADD endpoint_count :one',
          ConditionExpression: 'attribute_not_exists(endpoint_count) OR endpoint_count < :limit',
          ExpressionAttributeValues: { ':one': 1, ':limit': limit },
        },
      },
      { Put: { TableName: this.tableName, Item: { ...endpoint, ...webhookKeys.endpoint(endpoint.organization_id, endpoint.webhook_endpoint_id) }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ...(answered ? [answered.item] : []),
    ]);
    if (outcome === 'ok') {
      if (answered) completion!.committed(answered.response);
      return true;
    }
    if (outcome[0] === 'ConditionalCheckFailed') return false;
    if (outcome[2] === 'ConditionalCheckFailed') throw idempotencyKeyLost();
    throw new Error(`webhook endpoint create cancelled: ${outcome.join(',')}`);
  }

  async get(organizationId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: webhookKeys.endpoint(organizationId, endpointId), ConsistentRead: true }));
    return Item ? (withoutKeys(Item) as unknown as WebhookEndpoint) : undefined;
  }

  async list(organizationId: string): Promise<WebhookEndpoint[]> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :ep)',
        ExpressionAttributeValues: { ':pk': webhookKeys.endpointCount(organizationId).pk, ':ep': 'EP#' },
        ConsistentRead: true,
      }),
    );
    return Items.map((item) => withoutKeys(item) as unknown as WebhookEndpoint);
  }

  async replace(current: WebhookEndpoint, next: WebhookEndpoint): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...stripUndefined(next), ...webhookKeys.endpoint(next.organization_id, next.webhook_endpoint_id) },
          ConditionExpression: 'updated_at = :seen',
          ExpressionAttributeValues: { ':seen': current.updated_at },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async remove(organizationId: string, endpointId: string): Promise<boolean> {
    const outcome = await transact(this.client, [
      { Delete: { TableName: this.tableName, Key: webhookKeys.endpoint(organizationId, endpointId), ConditionExpression: 'attribute_exists(pk)' } },
      { Update: { TableName: this.tableName, Key: webhookKeys.endpointCount(organizationId), UpdateExpression: 'ADD endpoint_count :minus', ExpressionAttributeValues: { ':minus': -1 } } },
    ]);
    if (outcome === 'ok') return true;
    if (outcome[0] === 'ConditionalCheckFailed') return false;
    throw new Error(`webhook endpoint delete cancelled: ${outcome.join(',')}`);
  }

  async markFailing(endpoint: WebhookEndpoint, at: string): Promise<void> {
    await this.quietly({
      Key: webhookKeys.endpoint(endpoint.organization_id, endpoint.webhook_endpoint_id),
      UpdateExpression: 'SET failing_since = :at',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(failing_since)',
      ExpressionAttributeValues: { ':at': at },
    });
  }

  async clearFailing(endpoint: WebhookEndpoint): Promise<void> {
    await this.quietly({ Key: webhookKeys.endpoint(endpoint.organization_id, endpoint.webhook_endpoint_id), UpdateExpression: 'REMOVE failing_since', ConditionExpression: 'attribute_exists(pk)' });
  }

  async disable(endpoint: WebhookEndpoint, reason: NonNullable<WebhookEndpoint['disabled_reason']>, at: string): Promise<void> {
    await this.quietly({
      Key: webhookKeys.endpoint(endpoint.organization_id, endpoint.webhook_endpoint_id),
      // updated_at moves on: a merchant's concurrent change (read before) must read again.
      UpdateExpression: 'SET #status = :disabled, disabled_reason = :reason, updated_at = :at REMOVE failing_since',
      ConditionExpression: '#status = :enabled',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':disabled': 'disabled', ':enabled': 'enabled', ':reason': reason, ':at': laterThan(at, endpoint.updated_at) },
    });
  }

  /** A stamp another sender already set, or an endpoint removed meanwhile, is no failure. */
  private async quietly(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<void> {
    try {
      await this.client.send(new UpdateCommand({ TableName: this.tableName, ...input }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

export class DynamoWebhookMessages implements MessageStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(message: WebhookMessage): Promise<boolean> {
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...message, ...webhookKeys.laneEntry(message) }, ConditionExpression: 'attribute_not_exists(pk)' }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async addAll(messages: readonly WebhookMessage[]): Promise<void> {
    for (let first = 0; first < messages.length; first += TRANSACTION_ITEMS) {
      const chunk = messages.slice(first, first + TRANSACTION_ITEMS);
      // One transaction for the lot: all new is the usual case. When a redelivered event's entry is there already
      // (cancelled on its condition), one by one, each unless it is there.
      const outcome = await transact(
        this.client,
        chunk.map((message) => ({ Put: { TableName: this.tableName, Item: { ...message, ...webhookKeys.laneEntry(message) }, ConditionExpression: 'attribute_not_exists(pk)' } })),
      );
      if (outcome === 'ok') continue;
      if (!outcome.includes('ConditionalCheckFailed')) throw new Error(`adding webhook messages was cancelled: ${outcome.join(',')}`);
      await Promise.all(chunk.map((message) => this.add(message)));
    }
  }

  async front(endpointId: string, recordId: string): Promise<{ head: WebhookMessage; more: boolean } | undefined> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({ TableName: this.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': webhookKeys.lane(endpointId, recordId) }, Limit: 2, ConsistentRead: true }),
    );
    return Items[0] ? { head: messageOf(Items[0]), more: Items.length > 1 } : undefined;
  }

  async get(ref: MessageRef): Promise<WebhookMessage | undefined> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: webhookKeys.laneEntry(ref), ConsistentRead: true }));
    return Item ? messageOf(Item) : undefined;
  }

  async lease(message: WebhookMessage, until: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: webhookKeys.laneEntry(message),
          UpdateExpression: 'SET leased_until = :until',
          ConditionExpression: 'attempts = :attempts AND (attribute_not_exists(leased_until) OR leased_until < :now)',
          ExpressionAttributeValues: { ':until': until, ':attempts': message.attempts, ':now': new Date().toISOString() },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async reschedule(message: WebhookMessage, attempts: number, nextAttemptAt: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: webhookKeys.laneEntry(message),
        UpdateExpression: 'SET attempts = :attempts, next_attempt_at = :next REMOVE leased_until',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':attempts': attempts, ':next': nextAttemptAt },
      }),
    );
  }

  async remove(message: WebhookMessage): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: webhookKeys.laneEntry(message) }));
  }

  async settle(message: SettledMessage): Promise<void> {
    const { outcome: _unused, settled_at: _at, ...pending } = message;
    const outcome = await transact(this.client, [
      { Put: { TableName: this.tableName, Item: { ...stripLease(message), ...webhookKeys.settled(message) } } },
      { Delete: { TableName: this.tableName, Key: webhookKeys.laneEntry(pending) } },
    ]);
    if (outcome !== 'ok') throw new Error(`settling a webhook message was cancelled: ${outcome.join(',')}`);
  }

  async settledBetween(endpointId: string, since: string, until: string): Promise<SettledMessage[]> {
    const shards = Array.from({ length: SETTLED_SHARDS }, (_unused, shard) => this.readSettled(`${P.webhookHeld}${endpointId}#S${shard}`, since, until));
    const settled: SettledMessage[] = [];
    for await (const item of mergeSorted(shards, (item) => item.sk as string, 'ascending')) settled.push(withoutKeys(item) as unknown as SettledMessage);
    return settled;
  }

  async forgetSettled(message: SettledMessage): Promise<void> {
    await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: webhookKeys.settled(message) }));
  }

  private async *readSettled(pk: string, since: string, until: string): AsyncGenerator<Item> {
    let startKey: Item | undefined;
    do {
      const { Items = [], LastEvaluatedKey } = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :since AND :until',
          ExpressionAttributeValues: { ':pk': pk, ':since': since, ':until': `${until}~` },
          ExclusiveStartKey: startKey,
        }),
      );
      yield* Items;
      startKey = LastEvaluatedKey;
    } while (startKey);
  }
}

export class DynamoWebhookAttempts implements AttemptStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(attempt: DeliveryAttempt): Promise<void> {
    const expiresAt = epochSeconds(attempt.attempted_at) + ATTEMPT_RETENTION_DAYS * 86_400;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...attempt, pk: webhookKeys.attemptPartition(attempt.webhook_endpoint_id, randomInt(ATTEMPT_SHARDS)), sk: `${attempt.attempted_at}#${attempt.attempt_id}`, expires_at: expiresAt },
      }),
    );
  }

  /**
   * Newest first over the shards, merged. A cursor is the sort key of the last
   * attempt returned; a bare page_index reads the pages before it (attempts
   * are kept 30 days, and a page is a few Queries).
   */
  async list(endpointId: string, page: { pageSize: number; pageIndex: number; cursor?: string | undefined }): Promise<AttemptPage> {
    let before = page.cursor !== undefined ? decodeAttemptCursor(page.cursor, endpointId, page.pageIndex) : undefined;
    let items: Item[] = [];
    for (let index = page.cursor !== undefined ? page.pageIndex : 0; index <= page.pageIndex; index += 1) {
      items = await this.readPage(endpointId, before, page.pageSize + 1);
      if (index < page.pageIndex) {
        if (items.length <= page.pageSize) return { attempts: [] };
        before = items[page.pageSize - 1]!.sk as string;
      }
    }
    const shown = items.slice(0, page.pageSize);
    const last = shown.at(-1);
    return {
      attempts: shown.map((item) => withoutKeys(item) as unknown as DeliveryAttempt),
      ...(items.length > page.pageSize && last ? { nextCursor: encodeAttemptCursor(last.sk as string, endpointId, page.pageIndex + 1) } : {}),
    };
  }

  private async readPage(endpointId: string, before: string | undefined, limit: number): Promise<Item[]> {
    const shards = Array.from({ length: ATTEMPT_SHARDS }, (_unused, shard) => this.readShard(webhookKeys.attemptPartition(endpointId, shard), before, limit));
    const items: Item[] = [];
    for await (const item of mergeSorted(shards, (item) => item.sk as string, 'descending')) {
      items.push(item);
      if (items.length >= limit) break;
    }
    return items;
  }

  private async *readShard(pk: string, before: string | undefined, limit: number): AsyncGenerator<Item> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: before !== undefined ? 'pk = :pk AND sk < :before' : 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk, ...(before !== undefined ? { ':before': before } : {}) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    yield* Items;
  }
}

const ATTEMPT_SORT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#att_[A-Za-z0-9]{1,40}$/;

function encodeAttemptCursor(sortKey: string, endpointId: string, pageIndex: number): string {
  return Buffer.from(JSON.stringify({ s: sortKey, e: endpointId, p: pageIndex })).toString('base64url');
}

function decodeAttemptCursor(cursor: string, endpointId: string, pageIndex: number): string {
  const invalid = () => new InvalidRequest([{ field: 'cursor', message: 'does not belong to this list request; follow links.next as given' }], 'INVALID_CURSOR');
  let decoded: { s?: unknown; e?: unknown; p?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof decoded;
  } catch {
    throw invalid();
  }
  if (decoded?.e !== endpointId || decoded.p !== pageIndex || typeof decoded.s !== 'string' || !ATTEMPT_SORT_KEY.test(decoded.s)) throw invalid();
  return decoded.s;
}

/**
 * ENDPOINT_CONCURRENCY slot items per endpoint, each its own partition: a slot
 * is taken by a conditional write when free or its lease ran out (a crashed
 * sender's slot frees itself), and freed after the attempt.
 *
 * Each slot item also carries the endpoint's backlog flag (`backlog`, set to
 * a fresh stamp): set on every slot when a message is parked while some slot
 * lacks it, cleared on every slot by a holder that finds nothing parked.
 * A release reads its slot's flag back in the same write, so a delivery learns
 * whether to take a parked message out without another read, and the flags
 * are written only when a backlog starts or ends.
 *
 * No wake-up is lost: a parker writes its message before it reads the flags
 * (and sets the missing ones), then takes a message out itself if a slot is
 * free by then; a holder that clears its flag searches the shards once more.
 */
export class DynamoEndpointSlots implements EndpointSlots {
  /** What this container saw of the slots; one per store, so one per container. */
  private readonly here = new SlotsSeenHere();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly slots = ENDPOINT_CONCURRENCY,
  ) {}

  async acquire(endpointId: string, until: number): Promise<number | undefined> {
    const here = this.here.of(endpointId);
    const now = Date.now();
    // One slot first, the one this container freed last if it has not taken it again (likely still free), else a
    // random one it does not hold: with room, that is the only write. Then the free ones the read shows.
    const busy = (slot: number) => here.held.has(slot) || here.trying.has(slot);
    const first = here.freed.find((slot) => !busy(slot)) ?? randomOf(Array.from({ length: this.slots }, (_unused, slot) => slot).filter((slot) => !busy(slot)));
    // Every slot held or being taken in this container: no write could succeed.
    if (first === undefined) return undefined;
    if (await this.takeHere(endpointId, first, until, now)) return first;
    for (const slot of (await this.read(endpointId)).filter((state) => state.free(now) && state.slot !== first && !busy(state.slot))) {
      if (await this.takeHere(endpointId, slot.slot, until, now)) return slot.slot;
    }
    return undefined;
  }

  async release(endpointId: string, slot: number): Promise<boolean> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({ TableName: this.tableName, Key: webhookKeys.slot(endpointId, slot), UpdateExpression: 'SET held_until = :free', ExpressionAttributeValues: { ':free': 0 }, ReturnValues: 'ALL_NEW' }),
      );
      return typeof Attributes?.backlog === 'string';
    } finally {
      // Even when the write failed: the slot is then free once its lease runs out, and a take tried before that is
      // refused by its condition; held here, this container would never try it again.
      this.here.released(endpointId, slot);
    }
  }

  nextRelease(endpointId: string, ms: number): Promise<void> {
    return this.here.nextRelease(endpointId, ms);
  }

  async backlogged(endpointIds: readonly string[]): Promise<Set<string>> {
    const states = await batchGet(
      this.client,
      this.tableName,
      endpointIds.flatMap((endpointId) => Array.from({ length: this.slots }, (_unused, slot) => webhookKeys.slot(endpointId, slot))),
      { consistentRead: true },
    );
    const now = Date.now();
    const flagged = new Set<string>();
    const held = new Map<string, number>();
    for (const item of states) {
      const endpointId = slotEndpointOf(item.pk as string);
      if (typeof item.backlog === 'string') flagged.add(endpointId);
      if (typeof item.held_until === 'number' && item.held_until >= now) held.set(endpointId, (held.get(endpointId) ?? 0) + 1);
    }
    // With a slot free, a new message is queued even beside a flag: the flag may be stale (it goes with the next
    // delivery's look), and a message that finds no slot after all waits a moment, then parks.
    return new Set([...flagged].filter((endpointId) => held.get(endpointId) === this.slots));
  }

  async park(refs: readonly MessageRef[], at: string): Promise<boolean> {
    const endpointId = refs[0]?.webhook_endpoint_id;
    if (endpointId === undefined) return false;
    // One batch, unconditional: a message parked twice (a redelivered event) is taken out twice, and its second
    // entry finds it delivered or claimed.
    await batchWrite(this.client, this.tableName, refs.map((ref) => ({ PutRequest: { Item: { ...parkedKey(ref, at), ref } } })));
    // After the writes: a holder that cleared its flag before this read searches again and finds them.
    const states = await this.read(endpointId);
    const unflagged = states.filter((state) => state.backlog === undefined);
    if (unflagged.length === 0) return states.some((state) => state.free(Date.now()));
    const stamp = `${at}#${randomUUID()}`;
    await Promise.all(unflagged.map((state) => this.flag(endpointId, state.slot, stamp)));
    // A holder that released before its flag was set does not look: its slot shows free now (or its next holder's
    // release reads the flag).
    return (await this.read(endpointId)).some((state) => state.free(Date.now()));
  }

  async stillParked(ref: MessageRef, parkedAt: string): Promise<boolean> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: parkedKey(ref, parkedAt), ConsistentRead: true, ProjectionExpression: 'pk' }));
    return Item !== undefined;
  }

  async drained(endpointId: string): Promise<MessageRef | undefined> {
    const found = await this.takeParked(endpointId);
    if (found) return found;
    // Nothing parked: the flags go (every slot's, so the other holders do not search too), then one more look, for a
    // message parked while they were read as set.
    await Promise.all(Array.from({ length: this.slots }, (_unused, slot) => this.client.send(new UpdateCommand({ TableName: this.tableName, Key: webhookKeys.slot(endpointId, slot), UpdateExpression: 'REMOVE backlog' }))));
    const late = await this.takeParked(endpointId);
    if (late) await this.flagAll(endpointId);
    return late;
  }

  /** The oldest of a random shard (a big backlog answers there), else of the first other shard holding one, all read together. */
  private async takeParked(endpointId: string): Promise<MessageRef | undefined> {
    const first = randomInt(PARKED_SHARDS);
    const found = await this.takeOldest(endpointId, first);
    if (found) return found;
    const others = Array.from({ length: PARKED_SHARDS - 1 }, (_unused, step) => (first + 1 + step) % PARKED_SHARDS);
    // Reads only, together; then one shard that showed a message is taken from (one taken by another holder meanwhile
    // is no sign the others are empty).
    const holding = (await Promise.all(others.map(async (shard) => ((await this.oldestParked(endpointId, shard)) ? shard : undefined)))).filter((shard) => shard !== undefined);
    for (const shard of holding) {
      const taken = await this.takeOldest(endpointId, shard);
      if (taken) return taken;
    }
    return undefined;
  }

  private async oldestParked(endpointId: string, shard: number): Promise<Item | undefined> {
    const { Items = [] } = await this.client.send(
      new QueryCommand({ TableName: this.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': webhookKeys.parkedPartition(endpointId, shard) }, Limit: 1, ConsistentRead: true }),
    );
    return Items[0];
  }

  /** The shard's oldest, deleted by this caller; until one is taken or the shard is empty. */
  private async takeOldest(endpointId: string, shard: number): Promise<MessageRef | undefined> {
    for (;;) {
      const item = await this.oldestParked(endpointId, shard);
      if (!item) return undefined;
      try {
        await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'attribute_exists(pk)' }));
        return item.ref as MessageRef;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
  }

  private async takeHere(endpointId: string, slot: number, until: number, now: number): Promise<boolean> {
    const seen = this.here.of(endpointId);
    seen.trying.add(slot);
    const taken = await this.take(endpointId, slot, until, now).finally(() => seen.trying.delete(slot));
    if (taken) this.here.taken(endpointId, slot);
    return taken;
  }

  private async take(endpointId: string, slot: number, until: number, now: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: webhookKeys.slot(endpointId, slot),
          UpdateExpression: 'SET held_until = :until',
          ConditionExpression: 'attribute_not_exists(held_until) OR held_until < :now',
          ExpressionAttributeValues: { ':until': until, ':now': now },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  private async flag(endpointId: string, slot: number, stamp: string): Promise<void> {
    await this.client.send(new UpdateCommand({ TableName: this.tableName, Key: webhookKeys.slot(endpointId, slot), UpdateExpression: 'SET backlog = :stamp', ExpressionAttributeValues: { ':stamp': stamp } }));
  }

  private async flagAll(endpointId: string): Promise<void> {
    const stamp = `${new Date().toISOString()}#${randomUUID()}`;
    await Promise.all(Array.from({ length: this.slots }, (_unused, slot) => this.flag(endpointId, slot, stamp)));
  }

  private async read(endpointId: string): Promise<Array<{ slot: number; backlog: string | undefined; free(now: number): boolean }>> {
    const items = await batchGet(this.client, this.tableName, Array.from({ length: this.slots }, (_unused, slot) => webhookKeys.slot(endpointId, slot)), { consistentRead: true });
    const byPk = new Map(items.map((item) => [item.pk as string, item]));
    return Array.from({ length: this.slots }, (_unused, slot) => {
      const item = byPk.get(webhookKeys.slot(endpointId, slot).pk);
      const heldUntil = typeof item?.held_until === 'number' ? item.held_until : 0;
      return { slot, backlog: typeof item?.backlog === 'string' ? item.backlog : undefined, free: (now: number) => heldUntil < now };
    });
  }
}

/**
 * What one container knows of an endpoint's slots without reading them: the
 * ones it holds (no use trying those), the ones it freed, most recent first
 * (likely still free), and the senders in it waiting for one. Lambda runs one
 * invocation at a time per environment, so there this is the slot it freed
 * last; where several run in one process (the local runtime), a waiting sender
 * is woken by a release here instead of trying again blind. An endpoint's entry
 * is a few numbers, kept for the container's life.
 */
class SlotsSeenHere {
  private readonly endpoints = new Map<string, { held: Set<number>; trying: Set<number>; freed: number[]; waiting: Array<() => void> }>();

  of(endpointId: string) {
    let seen = this.endpoints.get(endpointId);
    if (!seen) {
      seen = { held: new Set(), trying: new Set(), freed: [], waiting: [] };
      this.endpoints.set(endpointId, seen);
    }
    return seen;
  }

  taken(endpointId: string, slot: number): void {
    const seen = this.of(endpointId);
    seen.held.add(slot);
    seen.freed = seen.freed.filter((freed) => freed !== slot);
  }

  /** Wakes the longest waiting sender here, if any: one slot, one sender. */
  released(endpointId: string, slot: number): void {
    const seen = this.of(endpointId);
    seen.held.delete(slot);
    seen.freed = [slot, ...seen.freed.filter((freed) => freed !== slot)];
    seen.waiting.shift()?.();
  }

  nextRelease(endpointId: string, ms: number): Promise<void> {
    const seen = this.of(endpointId);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        seen.waiting = seen.waiting.filter((waiter) => waiter !== wake);
        resolve();
      }, ms);
      seen.waiting.push(wake);
    });
  }
}

function randomOf(slots: readonly number[]): number | undefined {
  return slots.length === 0 ? undefined : slots[randomInt(slots.length)];
}

function parkedKey(ref: MessageRef, at: string): { pk: string; sk: string } {
  return { pk: webhookKeys.parkedPartition(ref.webhook_endpoint_id, auShardOf(ref.record_id + ref.message_id) % PARKED_SHARDS), sk: `${at}#${ref.message_id}` };
}

/** `WHS#<whe_id>#<n>` -> `whe_id`. */
function slotEndpointOf(pk: string): string {
  return pk.slice(P.webhookSlot.length, pk.lastIndexOf('#'));
}

function messageOf(item: Item): WebhookMessage {
  const { leased_until: _lease, ...rest } = withoutKeys(item) as Item;
  return rest as unknown as WebhookMessage;
}

function stripLease(message: SettledMessage): Item {
  const { leased_until: _lease, ...rest } = message as unknown as Item;
  return rest;
}

function stripUndefined<T extends object>(value: T): Item {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined));
}

function laterThan(at: string, previous: string): string {
  return new Date(Math.max(Date.parse(at), Date.parse(previous) + 1)).toISOString();
}
