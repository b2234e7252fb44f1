import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuthFailureCounter, FailureSubject, FailureTally } from '#shared/domain/authentication.ts';
import type { CredentialStore, StoredCredential } from '#shared/domain/credentials.ts';
import { Conflict } from '#shared/domain/errors.ts';
import { keys, withoutKeys } from './keys.ts';
import { allItemsOf } from './partition.ts';
import { TTL_ATTRIBUTE } from './table.ts';
import { isConditionFailure } from './write-conflicts.ts';

const ORGANIZATION_INDEX = 'gsi2';

export class DynamoCredentialStore implements CredentialStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(accessId: string): Promise<StoredCredential | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.credential(accessId), ConsistentRead: true }),
    );
    return Item ? (withoutKeys(Item) as StoredCredential) : undefined;
  }

  async create(credential: StoredCredential): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...keys.credential(credential.api_access_id),
            ...keys.credentialByOrganization(credential.organization_id, credential.created_at, credential.api_access_id),
            ...credential,
          },
          // A credential hashed before versions were stored can never verify again: issuing its id anew (the seed,
          // which knows its key) replaces it, unless it was revoked.
          ConditionExpression: 'attribute_not_exists(pk) OR (attribute_not_exists(secret_mac_version) AND attribute_not_exists(revoked_at))',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new Conflict('CREDENTIAL_EXISTS', `api_access_id ${credential.api_access_id} is already in use`);
      }
      throw error;
    }
  }

  async listByOrganization(organizationId: string): Promise<StoredCredential[]> {
    const { gsi2pk } = keys.credentialByOrganization(organizationId, '', '');
    const items = await allItemsOf(this.client, { tableName: this.tableName, indexName: ORGANIZATION_INDEX, keyAttribute: 'gsi2pk', key: gsi2pk, order: 'descending' });
    return items.map((item) => withoutKeys(item) as unknown as StoredCredential);
  }

  /** Marks it revoked (kept for the record) and takes it out of the organization's list, in one write. */
  async revoke(accessId: string, now: Date): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.credential(accessId),
          UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now) REMOVE gsi2pk, gsi2sk',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':now': now.toISOString() },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** At most one write a minute per credential: the condition refuses a fresher stamp written meanwhile. */
  async recordUse(accessId: string, now: Date, staleBefore: Date): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.credential(accessId),
          UpdateExpression: 'SET last_used_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND (attribute_not_exists(last_used_at) OR last_used_at < :stale)',
          ExpressionAttributeValues: { ':now': now.toISOString(), ':stale': staleBefore.toISOString() },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * Failed authentications per source address and per access id, one item per
 * subject and clock minute (so an attacker's address or target is its own
 * partition, never a shared hot key), a number per second of it
 * (`s<epoch second>`, 60 at most), removed by TTL. Reading is one consistent
 * GetItem per subject and minute, in parallel; counting is one UpdateItem per
 * subject, an atomic ADD that answers the whole item as it stands after it,
 * so the caller learns the exact count with its own failure in it.
 */
export class DynamoAuthFailureCounter implements AuthFailureCounter {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(subjects: readonly FailureSubject[], minute: number): Promise<Array<{ previous: FailureTally; current: FailureTally }>> {
    return Promise.all(
      subjects.map(async (subject) => {
        const [previous, current] = await Promise.all([this.secondsOf(subject, minute - 1), this.secondsOf(subject, minute)]);
        return { previous, current };
      }),
    );
  }

  async add(subjects: readonly FailureSubject[], minute: number, second: number): Promise<FailureTally[]> {
    return Promise.all(
      subjects.map(async (subject) => {
        const { Attributes } = await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.authFailures(subject, minute),
            UpdateExpression: 'ADD #second :one SET #ttl = if_not_exists(#ttl, :ttl)',
            ExpressionAttributeNames: { '#second': `s${second}`, '#ttl': TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':one': 1, ':ttl': (minute + 2) * 60 },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return tallyOf(Attributes);
      }),
    );
  }

  private async secondsOf(subject: FailureSubject, minute: number): Promise<FailureTally> {
    const { Item } = await this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.authFailures(subject, minute), ConsistentRead: true }));
    return tallyOf(Item);
  }
}

function tallyOf(item: Record<string, unknown> | undefined): Array<[number, number]> {
  return Object.entries(item ?? {}).flatMap(([name, value]): Array<[number, number]> => {
    const second = /^s(\d+)$/.exec(name)?.[1];
    return second !== undefined && typeof value === 'number' ? [[Number(second), value]] : [];
  });
}
