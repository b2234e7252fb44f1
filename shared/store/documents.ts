import { createHash, randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { commitWrite } from '#shared/runtime/outcome.ts';
import type { IdempotencyCompletion } from '#shared/domain/idempotency.ts';
import type { AvailableDocument, StoredDocument } from '#shared/domain/documents/document.ts';
import type { DocumentListQuery, DocumentPage, DocumentRepository } from '#shared/domain/documents/ports.ts';
import { InvalidRequest, Unavailable } from '#shared/domain/errors.ts';
import { DuplicateDocument } from '#shared/domain/documents/ports.ts';
import type { ScanStatus } from '#shared/domain/documents/document.ts';
import { SORT_INSTANT_PATTERN, isWithinRange } from './cursor.ts';
import type { SortRange } from './cursor.ts';
import { idempotencyCompletionWrite, idempotencyKeyLost } from './idempotency.ts';
import { DOCUMENT_INDEX_ATTRIBUTES, documentListPartition, documentListSortKeyBounds, keys } from './keys.ts';
import type { PagedList } from './page-boundaries.ts';
import { PageBoundaries, collect } from './page-boundaries.ts';
import { documentFromItem } from './records.ts';
import { cancellationReasons, isConditionFailure } from './write-conflicts.ts';

type Item = Record<string, unknown>;
type Partition = ReturnType<typeof documentListPartition>;

const epochSeconds = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * Documents in the single table. Access patterns:
 * - get one: GetItem on `DOC#<org>#<doc>` (the organization is in the key);
 * - list, newest first, optionally by type or resource and received range:
 *   Query on gsi1 (all), gsi2 (type) or gsi3 (resource), descending, with the
 *   range as a key condition; type and resource together query gsi2 and filter
 *   on resource.
 * Only available documents carry the index keys.
 */
export class DynamoDocumentRepository implements DocumentRepository {
  private readonly pageBoundaries: PageBoundaries;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.pageBoundaries = new PageBoundaries(client, tableName);
  }

  async put(document: StoredDocument, options: { expiresAt?: Date; completion?: IdempotencyCompletion<StoredDocument> } = {}): Promise<void> {
    const put: Put = {
      TableName: this.tableName,
      Item: {
        ...document,
        ...keys.document(document.organization_id, document.document_id),
        ...(isListed(document) ? indexKeys(document) : {}),
        ...(options.expiresAt ? { expires_at: epochSeconds(options.expiresAt) } : {}),
      },
      // Ids are random, so this never fires in practice; it keeps a bug from overwriting a document.
      ConditionExpression: 'attribute_not_exists(pk)',
    };
    const claim = hashClaim(this.tableName, document);
    if (!options.completion && !claim) {
      await commitWrite(() => this.client.send(new PutCommand(put)));
      return;
    }
    const answered = options.completion && idempotencyCompletionWrite(this.tableName, options.completion, document);
    const items = [{ Put: put }, ...(claim ? [{ Put: claim }] : []), ...(answered ? [answered.item] : [])];
    await this.claimingHash(document, claim, async () => {
      try {
        await commitWrite(() => this.client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() })));
      } catch (error) {
        if (answered && cancellationReasons(error, items.length)?.at(-1) === 'ConditionalCheckFailed') throw idempotencyKeyLost();
        throw error;
      }
    });
    if (answered) options.completion!.committed(answered.response);
  }

  /**
   * Runs a transaction whose item 1 is `claim` (when there is one): a refused
   * claim is DuplicateDocument naming the holder. If the holder was removed
   * between the refusal and the read, the transaction runs once more.
   */
  private async claimingHash(document: StoredDocument, claim: Put | undefined, write: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await write();
        return;
      } catch (error) {
        if (!claim || cancellationReasons(error, 2)?.[1] !== 'ConditionalCheckFailed') throw error;
        const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.documentHash(document.organization_id, document.resource_id, document.sha256!), ConsistentRead: true }));
        if (typeof Item?.document_id === 'string') throw new DuplicateDocument(Item.document_id);
        if (attempt > 0) throw new Unavailable('the document could not be stored; retry', 1, { cause: error });
      }
    }
  }

  async get(organizationId: string, documentId: string): Promise<StoredDocument | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.document(organizationId, documentId), ConsistentRead: true }),
    );
    return Item ? documentFromItem(Item) : undefined;
  }

  async markAvailable(document: AvailableDocument): Promise<boolean> {
    const index = indexKeys(document);
    const evidence = Object.fromEntries(
      (['sha256', 'scan_status', 'retain_until', 'legal_hold'] as const).flatMap((name) => (document[name] !== undefined ? [[name, document[name]]] : [])),
    );
    const update = {
      TableName: this.tableName,
      Key: keys.document(document.organization_id, document.document_id),
      UpdateExpression: `SET #status = :available, #type = :type, #size = :size, received_at = :received_at, object_key = :object_key, ${[...Object.keys(index), ...Object.keys(evidence)]
        .map((name) => `${name} = :${name}`)
        .join(', ')} REMOVE expires_at, upload_key, upload_expires_at`,
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status', '#type': 'type', '#size': 'size' },
      ExpressionAttributeValues: {
        ':available': 'available',
        ':pending': 'pending',
        ':type': document.type,
        ':size': document.size,
        ':received_at': document.received_at,
        ':object_key': document.object_key,
        ...Object.fromEntries(Object.entries({ ...index, ...evidence }).map(([name, value]) => [`:${name}`, value])),
      },
    };
    const claim = hashClaim(this.tableName, document);
    if (!claim) return this.conditionalUpdate(update);
    let marked = true;
    await this.claimingHash(document, claim, async () => {
      try {
        await commitWrite(() => this.client.send(new TransactWriteCommand({ TransactItems: [{ Update: update }, { Put: claim }], ClientRequestToken: randomUUID() })));
      } catch (error) {
        // No longer pending (a repeat, a deletion): nothing to claim.
        if (cancellationReasons(error, 2)?.[0] !== 'ConditionalCheckFailed') throw error;
        marked = false;
      }
    });
    return marked;
  }

  async setScanStatus(organizationId: string, documentId: string, objectKey: string, status: ScanStatus): Promise<StoredDocument | undefined> {
    return this.updateReturning({
      Key: keys.document(organizationId, documentId),
      UpdateExpression: 'SET scan_status = :scan_status',
      ConditionExpression: 'object_key = :object_key AND #status = :available',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':scan_status': status, ':object_key': objectKey, ':available': 'available' },
    });
  }

  async setRetention(previous: StoredDocument, change: { legal_hold?: boolean; retain_until?: string }): Promise<StoredDocument | undefined> {
    const sets = Object.entries(change).filter(([, value]) => value !== undefined);
    return this.updateReturning({
      Key: keys.document(previous.organization_id, previous.document_id),
      UpdateExpression: `SET ${sets.map(([name]) => `${name} = :${name}`).join(', ')}`,
      // The date it was read with: a concurrent PUT's later date is never replaced by an earlier one.
      ConditionExpression: `#status = :available AND ${previous.retain_until !== undefined ? 'retain_until = :expected' : 'attribute_not_exists(retain_until)'}`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':available': 'available',
        ...(previous.retain_until !== undefined ? { ':expected': previous.retain_until } : {}),
        ...Object.fromEntries(sets.map(([name, value]) => [`:${name}`, value])),
      },
    });
  }

  async markRejected(organizationId: string, documentId: string, reason: string, expiresAt: Date): Promise<boolean> {
    return this.conditionalUpdate({
      Key: keys.document(organizationId, documentId),
      UpdateExpression: 'SET #status = :rejected, reason = :reason, expires_at = :expires_at REMOVE upload_key, upload_expires_at',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':rejected': 'rejected', ':pending': 'pending', ':reason': reason, ':expires_at': epochSeconds(expiresAt) },
    });
  }

  async markDeleting(organizationId: string, documentId: string, today: string): Promise<StoredDocument | 'retained' | undefined> {
    try {
      const { Attributes } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.document(organizationId, documentId),
          UpdateExpression: `SET #status = :deleting REMOVE ${DOCUMENT_INDEX_ATTRIBUTES.join(', ')}`,
          // Retention is checked by the write that starts the deletion: a hold set a moment earlier is never missed.
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(legal_hold) OR legal_hold = :false) AND (attribute_not_exists(retain_until) OR retain_until < :today)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':deleting': 'deleting', ':false': false, ':today': today },
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Attributes ? documentFromItem(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return error.Item ? 'retained' : undefined;
      throw error;
    }
  }

  async restore(previous: StoredDocument): Promise<void> {
    const index = isListed(previous) ? indexKeys(previous) : {};
    await this.conditionalUpdate({
      Key: keys.document(previous.organization_id, previous.document_id),
      UpdateExpression: `SET ${['#status = :previous', ...Object.keys(index).map((name) => `${name} = :${name}`)].join(', ')}`,
      ConditionExpression: '#status = :deleting',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':previous': previous.status,
        ':deleting': 'deleting',
        ...Object.fromEntries(Object.entries(index).map(([name, value]) => [`:${name}`, value])),
      },
    });
  }

  async remove(previous: StoredDocument): Promise<void> {
    const key = keys.document(previous.organization_id, previous.document_id);
    if (previous.sha256 === undefined) {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: key }));
      return;
    }
    // The hash is freed with the record, and only if this document holds it (a rejected duplicate never did).
    await this.client.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: this.tableName, Key: key } },
          {
            Delete: {
              TableName: this.tableName,
              Key: keys.documentHash(previous.organization_id, previous.resource_id, previous.sha256),
              ConditionExpression: 'attribute_not_exists(pk) OR document_id = :document_id',
              ExpressionAttributeValues: { ':document_id': previous.document_id },
            },
          },
        ],
        ClientRequestToken: randomUUID(),
      }),
    ).catch(async (error: unknown) => {
      // Held by another document: only the record goes.
      if (cancellationReasons(error, 2)?.[1] !== 'ConditionalCheckFailed') throw error;
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: key }));
    });
  }

  async list(query: DocumentListQuery): Promise<DocumentPage> {
    const plan = listPlan(query);
    const list: PagedList = {
      fingerprint: `doc-${plan.fingerprint}`,
      queryOnePage: async ({ startKey, limit, ascending }) => {
        const { Items = [], LastEvaluatedKey } = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: plan.partition.indexName,
            KeyConditionExpression: plan.keyCondition,
            ...(plan.filter ? { FilterExpression: plan.filter } : {}),
            ExpressionAttributeNames: plan.names,
            ExpressionAttributeValues: plan.values,
            // Newest first; page boundaries read back towards newer items.
            ScanIndexForward: ascending ?? false,
            Limit: limit,
            ExclusiveStartKey: startKey,
          }),
        );
        return { items: Items, lastEvaluatedKey: LastEvaluatedKey };
      },
      positionOf: (item) => positionOf(item, plan.partition),
      sortValueOf: (item) => item[plan.partition.sortKeyAttribute] as string,
    };
    // One more than the page tells whether another page exists without a second round trip.
    const items =
      query.cursor !== undefined
        ? (await collect(list.queryOnePage, decodeCursor(query.cursor, plan, query), query.pageSize + 1)).items
        : await this.pageBoundaries.readBarePage(list, query.pageIndex, query.pageSize);
    const page = items.slice(0, query.pageSize);
    const last = page.at(-1);
    return {
      documents: page.map((item) => documentFromItem(item) as AvailableDocument),
      ...(items.length > query.pageSize && last ? { nextCursor: encodeCursor(positionOf(last, plan.partition), plan, { pageIndex: query.pageIndex + 1, pageSize: query.pageSize }) } : {}),
    };
  }

  private async updateReturning(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<StoredDocument | undefined> {
    try {
      const { Attributes } = await this.client.send(new UpdateCommand({ TableName: this.tableName, ...input, ReturnValues: 'ALL_NEW' }));
      return Attributes ? documentFromItem(Attributes) : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  private async conditionalUpdate(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
    try {
      await this.client.send(new UpdateCommand({ TableName: this.tableName, ...input }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

type Put = { TableName: string; Item: Item; ConditionExpression: string };

/** The item that claims an available document's bytes for its organization and resource_id (none without a hash). */
function hashClaim(tableName: string, document: StoredDocument): Put | undefined {
  if (!isListed(document) || document.sha256 === undefined) return undefined;
  return {
    TableName: tableName,
    Item: { ...keys.documentHash(document.organization_id, document.resource_id, document.sha256), document_id: document.document_id },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
}

function isListed(document: StoredDocument): document is AvailableDocument {
  return document.status === 'available' && document.type !== undefined && document.received_at !== undefined;
}

function indexKeys(document: AvailableDocument): Record<string, string> {
  return keys.documentIndexes(document.organization_id, document.type, document.resource, document.received_at, document.document_id);
}


interface ListPlan {
  organizationId: string;
  partition: Partition;
  /** The range on the index's sort key, when the query has one. */
  bounds: SortRange;
  keyCondition: string;
  filter?: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
  /** Binds a cursor to the query it came from. */
  fingerprint: string;
}

function listPlan(query: DocumentListQuery): ListPlan {
  const partition = documentListPartition(query.organizationId, query.type !== undefined ? { type: query.type } : query.resource !== undefined ? { resource: query.resource } : {});
  const bounds = documentListSortKeyBounds({ from: query.from, to: query.to });
  const names: Record<string, string> = { '#pk': partition.partitionKeyAttribute };
  const values: Record<string, unknown> = { ':pk': partition.partitionKey };
  let keyCondition = '#pk = :pk';
  if (bounds.from !== undefined || bounds.to !== undefined) {
    names['#sk'] = partition.sortKeyAttribute;
    if (bounds.from !== undefined) values[':from'] = bounds.from;
    if (bounds.to !== undefined) values[':to'] = bounds.to;
    keyCondition += bounds.from !== undefined && bounds.to !== undefined ? ' AND #sk BETWEEN :from AND :to' : bounds.from !== undefined ? ' AND #sk >= :from' : ' AND #sk <= :to';
  }
  let filter: string | undefined;
  if (query.type !== undefined && query.resource !== undefined) {
    names['#resource'] = 'resource';
    values[':resource'] = query.resource;
    filter = '#resource = :resource';
  }
  const fingerprint = createHash('sha256').update(JSON.stringify([partition.partitionKey, bounds, filter ? query.resource : null])).digest('base64url').slice(0, 16);
  return { organizationId: query.organizationId, partition, bounds, keyCondition, ...(filter ? { filter } : {}), names, values, fingerprint };
}

/** The exclusive start key of a GSI query: the table key plus the index key of the last item read. */
function positionOf(item: Item, partition: Partition): Item {
  return { pk: item.pk, sk: item.sk, [partition.partitionKeyAttribute]: item[partition.partitionKeyAttribute], [partition.sortKeyAttribute]: item[partition.sortKeyAttribute] };
}

function encodeCursor(position: Item, plan: ListPlan, page: { pageIndex: number; pageSize: number }): string {
  return Buffer.from(JSON.stringify({ p: page.pageIndex, z: page.pageSize, f: plan.fingerprint, k: position })).toString('base64url');
}

/** `DOC#<ISO 8601 instant>#<document id>` (documentListSortKey). */
const CURSOR_SORT_KEY = /^DOC#([^#]+)#(doc_[A-Za-z0-9]{1,40})$/;

/**
 * A cursor is only honoured for the query, page and page size it was issued for, and
 * only if it points into the caller's own partition: a tampered cursor
 * cannot reach another organization's items. Its keys must be ones a listed
 * document of this organization can have, within the query's range: DynamoDB
 * would refuse any other start key, and the caller's edit would be a 5xx.
 */
function decodeCursor(cursor: string, plan: ListPlan, page: { pageIndex: number; pageSize: number }): Item {
  const invalid = () => new InvalidRequest([{ field: 'cursor', message: 'does not belong to this list request; follow links.next as given' }], 'INVALID_CURSOR');
  let decoded: { p?: unknown; z?: unknown; f?: unknown; k?: Record<string, unknown> };
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof decoded;
  } catch {
    throw invalid();
  }
  const key = decoded?.k;
  const expected = ['pk', 'sk', plan.partition.partitionKeyAttribute, plan.partition.sortKeyAttribute];
  if (
    decoded?.p !== page.pageIndex ||
    // Page n counts pages of the size the cursor was made with; one issued before cursors named it has none.
    (decoded.z !== undefined && decoded.z !== page.pageSize) ||
    decoded.f !== plan.fingerprint ||
    !key ||
    typeof key !== 'object' ||
    Object.keys(key).length !== expected.length ||
    !expected.every((name) => typeof key[name] === 'string') ||
    key[plan.partition.partitionKeyAttribute] !== plan.partition.partitionKey
  ) {
    throw invalid();
  }
  const sortKey = key[plan.partition.sortKeyAttribute] as string;
  const [, instant, documentId] = CURSOR_SORT_KEY.exec(sortKey) ?? [];
  const own = documentId === undefined ? undefined : keys.document(plan.organizationId, documentId);
  if (!own || !SORT_INSTANT_PATTERN.test(instant!) || key.pk !== own.pk || key.sk !== own.sk || !isWithinRange(sortKey, plan.bounds)) {
    throw invalid();
  }
  return key;
}
