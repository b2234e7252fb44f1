import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClaimOutcome, IdempotencyClaim, IdempotencyStore, StoredResponse } from '#shared/domain/idempotency.ts';
import { keys } from './keys.ts';
import { isConditionFailure } from './write-conflicts.ts';

/**
 * `IDEM#<org>#<key>` items. A claim is one conditional put of an in-progress
 * marker that succeeds only when the key is free, expired, or held by a
 * crashed run of the same request whose lease ran out; otherwise the item it
 * collided with says whether to replay, answer 409 or answer 422. TTL
 * (`expires_at`) removes items after the retention; reads also check it.
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
            lease_until: nowMs + claim.leaseMs,
            expires_at: Math.ceil((nowMs + claim.retentionMs) / 1000),
          },
          ConditionExpression:
            'attribute_not_exists(pk) OR expires_at < :now_seconds OR (#status = :in_progress AND lease_until < :now_ms AND fingerprint = :fingerprint)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':now_seconds': Math.floor(nowMs / 1000), ':now_ms': nowMs, ':in_progress': 'in_progress', ':fingerprint': claim.fingerprint },
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
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: keys.idempotency(claim.scope, claim.key),
        // Stored as JSON text: replayed byte-for-byte, whatever the body's shape.
        UpdateExpression: 'SET #status = :completed, #response = :response REMOVE lease_until',
        ConditionExpression: '#status = :in_progress AND fingerprint = :fingerprint',
        ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
        ExpressionAttributeValues: { ':completed': 'completed', ':in_progress': 'in_progress', ':response': JSON.stringify(response), ':fingerprint': claim.fingerprint },
      }),
    );
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    try {
      await this.client.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: keys.idempotency(claim.scope, claim.key),
          ConditionExpression: '#status = :in_progress AND fingerprint = :fingerprint',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':in_progress': 'in_progress', ':fingerprint': claim.fingerprint },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}
