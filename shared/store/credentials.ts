import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CredentialStore, StoredCredential } from '#shared/domain/credentials.ts';
import { Conflict } from '#shared/domain/errors.ts';
import { keys, withoutKeys } from './keys.ts';
import { isConditionFailure } from './write-conflicts.ts';

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
          Item: { ...keys.credential(credential.api_access_id), ...credential },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) {
        throw new Conflict('CREDENTIAL_EXISTS', `api_access_id ${credential.api_access_id} is already in use`);
      }
      throw error;
    }
  }
}
