import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Conflict } from '#shared/domain/errors.ts';
import type { ClaimOutcome, IdempotencyClaim, IdempotencyCompletion, IdempotencyStore, StoredResponse } from '#shared/domain/idempotency.ts';
import { keys } from './keys.ts';
import type { TransactItem } from './write-conflicts.ts';
import { isConditionFailure } from './write-conflicts.ts';

/** Far below DynamoDB's 400 KB item limit and 4 MB transaction limit; our answers are a few KB. */
const MAX_STORED_RESPONSE_BYTES = 64 * 1024;

/**
 * `IDEM#<org>#<key>` items (the prefix keeps them apart from records in the
 * table's stream). A claim is one conditional put of an in-progress marker,
 * owned by the run that wrote it, that succeeds only when the key is free,
 * expired, held by a run of the same request whose lease ran out, or already
 * this run's (the SDK's retry of a put that landed but lost its answer);
 * otherwise the item it collided with says whether to replay, answer 409 or
 * answer 422. Every later write to the key is conditional on the same owner,
 * so a run that lost its key cannot complete or release it. TTL (`expires_at`)
 * removes items after the retention; reads also check it.
 */
export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(claim: IdempotencyClaim): Promise<ClaimOutcome> {
    const key = keys.idempotency(claim.scope, claim.key);
    const nowMs = claim.now.getTime();
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...key,
            entity: 'idempotency-key',
            status: 'in_progress',
            fingerprint: claim.fingerprint,
            owner: claim.owner,
            lease_until: nowMs + claim.leaseMs,
            expires_at: Math.ceil((nowMs + claim.retentionMs) / 1000),
          },
          // The last term is this very claim: when its first attempt landed and the answer was lost, the
          // SDK's retry finds the marker it wrote itself, and must not take it for another request's.
          ConditionExpression: `attribute_not_exists(pk) OR expires_at < :now_seconds OR (#status = :in_progress AND lease_until < :now_ms AND fingerprint = :fingerprint) OR (#status = :in_progress AND #owner = :owner)`,
          ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':now_seconds': Math.floor(nowMs / 1000),
            ':now_ms': nowMs,
            ':in_progress': 'in_progress',
            ':owner': claim.owner,
            ':fingerprint': claim.fingerprint,
          },
        }),
      );
      return { kind: 'claimed' };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      // A strongly consistent read of the item we collided with (the document client does not
      // unmarshall ReturnValuesOnConditionCheckFailure items, and this path is the rare one).
      const existing = (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }))).Item;
      if (!existing) return this.claim(claim); // released between our put and read: try again
      if (existing.fingerprint !== claim.fingerprint) return { kind: 'mismatch' };
      if (existing.status === 'completed') return { kind: 'replay', response: JSON.parse(existing.response as string) as StoredResponse };
      return { kind: 'in-progress' };
    }
  }

  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.client.send(new UpdateCommand(completionUpdate(this.tableName, claim, response)));
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.client.send(new DeleteCommand({ TableName: this.tableName, Key: keys.idempotency(claim.scope, claim.key), ...ownedBy(claim) }));
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async abandon(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.idempotency(claim.scope, claim.key),
          UpdateExpression: 'SET lease_until = :ended',
          ...ownedBy(claim, { ':ended': 0 }),
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * The transaction item that completes `completion`'s key with the answer for
 * `record`: the repositories add it to the transaction that writes the record.
 * It fails (cancelling the transaction) when the run no longer owns the key.
 */
export function idempotencyCompletionWrite<T>(tableName: string, completion: IdempotencyCompletion<T>, record: T): { item: TransactItem; response: StoredResponse } {
  const response = completion.answer(record);
  return { item: { Update: completionUpdate(tableName, completion.claim, response) }, response };
}

/** A create whose run no longer owns its key (a retry took it over): it wrote nothing. */
export function idempotencyKeyLost(): Conflict {
  return new Conflict('IDEMPOTENCY_KEY_IN_USE', 'another request with this Idempotency-Key took over; retry to get its answer');
}

function completionUpdate(tableName: string, claim: IdempotencyClaim, response: StoredResponse) {
  // Stored as JSON text: replayed byte-for-byte, whatever the body's shape.
  const stored = JSON.stringify(response);
  if (Buffer.byteLength(stored) > MAX_STORED_RESPONSE_BYTES) throw new Error(`idempotent answer of ${Buffer.byteLength(stored)} bytes is too large to store`);
  const fence = ownedBy(claim, { ':completed': 'completed', ':response': stored });
  return {
    TableName: tableName,
    Key: keys.idempotency(claim.scope, claim.key),
    UpdateExpression: 'SET #status = :completed, #response = :response REMOVE lease_until',
    ...fence,
    ExpressionAttributeNames: { ...fence.ExpressionAttributeNames, '#response': 'response' },
  };
}

function ownedBy(claim: IdempotencyClaim, values: Record<string, unknown> = {}) {
  return {
    ConditionExpression: '#status = :in_progress AND #owner = :owner',
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
    ExpressionAttributeValues: { ':in_progress': 'in_progress', ':owner': claim.owner, ...values },
  };
}
