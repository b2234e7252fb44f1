import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { commitWrite } from '#shared/runtime/outcome.ts';
import type { IdempotencyCompletion } from '#shared/domain/idempotency.ts';
import type { OneTimeToken } from '#shared/domain/paymethods/model.ts';
import type { OneTimeTokenRepository } from '#shared/domain/paymethods/ports.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { idempotencyCompletionWrite, idempotencyKeyLost } from './idempotency.ts';
import { keys, withoutKeys } from './keys.ts';
import type { TransactItem } from './write-conflicts.ts';
import { cancellationReasons } from './write-conflicts.ts';
import { TTL_ATTRIBUTE } from '../platform/table.ts';

/**
 * One-time tokens live in the table until DynamoDB's TTL removes them (which
 * can lag by hours), so the use case also checks `expires_at` on every read.
 * A consumed token stays until then: a second use is told apart (409) from an
 * unknown one (400). A token is consumed in the transaction that creates
 * its paymethod, with the write oneTimeTokenConsumption builds.
 */
export class DynamoOneTimeTokenStore implements OneTimeTokenRepository {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async create(token: OneTimeToken, secret: SealedSecret, completion?: IdempotencyCompletion<OneTimeToken>): Promise<void> {
    const { expires_at: expiresAt, ...record } = token;
    const put = {
      TableName: this.tableName,
      Item: {
        ...keys.oneTimeToken(token.one_time_token),
        entity: 'one-time-token',
        ...record,
        expires_at_iso: expiresAt,
        [TTL_ATTRIBUTE]: Math.ceil(Date.parse(expiresAt) / 1000),
        vault: secret,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    };
    if (!completion) {
      await commitWrite(() => this.client.send(new PutCommand(put)));
      return;
    }
    const answered = idempotencyCompletionWrite(this.tableName, completion, token);
    try {
      await commitWrite(() => this.client.send(new TransactWriteCommand({ TransactItems: [{ Put: put }, answered.item], ClientRequestToken: randomUUID() })));
    } catch (error) {
      // The token id is new and random: only the key's fence fails a condition here (anything else is a transient conflict).
      if (cancellationReasons(error, 2)?.[1] === 'ConditionalCheckFailed') throw idempotencyKeyLost();
      throw error;
    }
    completion.committed(answered.response);
  }

  async getWithSecret(token: string): Promise<{ token: OneTimeToken; secret: SealedSecret } | undefined> {
    const item = await this.read(token);
    if (!item) return undefined;
    const { vault, ...rest } = item;
    return { token: toOneTimeToken(rest), secret: vault as SealedSecret };
  }

  async get(token: string): Promise<OneTimeToken | undefined> {
    const item = await this.read(token);
    return item && toOneTimeToken(item);
  }

  private async read(token: string): Promise<Record<string, unknown> | undefined> {
    // Consistent: a token consumed a moment ago must read as consumed.
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.oneTimeToken(token), ConsistentRead: true }));
    return Item && withoutKeys(Item);
  }
}

/**
 * The write that consumes `token` for `paymethodToken`, for the paymethod
 * create's transaction: it fails (cancelling the create) when the token is
 * unknown or already used.
 */
export function oneTimeTokenConsumption(tableName: string, token: string, paymethodToken: string, now: Date): TransactItem {
  return {
    Update: {
      TableName: tableName,
      Key: keys.oneTimeToken(token),
      UpdateExpression: 'SET consumed_at = :now, consumed_by = :paymethod',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(consumed_at)',
      ExpressionAttributeValues: { ':now': now.toISOString(), ':paymethod': paymethodToken },
    },
  };
}

/** The one mapping from a stored token item to the domain's token; the sealed number never leaves through it. */
function toOneTimeToken(item: Record<string, unknown>): OneTimeToken {
  const { vault: _vault, entity: _entity, expires_at_iso: expiresAt, consumed_by: _consumedBy, card, echeck, ...rest } = item;
  return {
    ...(rest as Omit<OneTimeToken, 'expires_at' | 'card' | 'echeck'>),
    ...(card ? { card: withoutFingerprint(card) as OneTimeToken['card'] } : {}),
    ...(echeck ? { echeck: withoutFingerprint(echeck) as OneTimeToken['echeck'] } : {}),
    expires_at: expiresAt as string,
  };
}

/**
 * Tokens minted before fingerprints were left to paymethods hold one (for the
 * hour they live): it never leaves the item, so no token answer carries it.
 */
function withoutFingerprint(details: unknown): Record<string, unknown> {
  const { fingerprint: _fingerprint, ...rest } = details as Record<string, unknown>;
  return rest;
}
