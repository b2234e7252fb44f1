import { randomUUID } from 'node:crypto';
import { ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FingerprintBackfillStore } from '#shared/domain/paymethods/backfill-fingerprints.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { keys } from './keys.ts';
import { DuplicateScopes } from './duplicate-scopes.ts';
import { PAYMETHOD_ENTITY, SECRET_ATTRIBUTE, VERSION_ATTRIBUTE, paymethodFromItem } from './paymethod-item.ts';

/**
 * The backfill's walk is a one-off admin Scan of the table, never a request
 * path: there is no index of "records without a fingerprint", and walking per
 * organization would first need the organizations, which is a Scan too. Each
 * page's LastEvaluatedKey is the resume token, so an interrupted run continues
 * where it stopped and the Scan's cost is paid once.
 */
export class DynamoFingerprintBackfillStore implements FingerprintBackfillStore {
  private readonly scopes: DuplicateScopes;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.scopes = new DuplicateScopes(client, tableName);
  }

  async pageWithoutFingerprint(resume: string | undefined, limit: number, organizationId?: string) {
    const result = await this.client.send(
      new ScanCommand({
        TableName: this.tableName,
        Limit: limit,
        ConsistentRead: true,
        FilterExpression: `entity = :paymethod AND paymethod_type IN (:card, :echeck) AND attribute_not_exists(card.fingerprint) AND attribute_not_exists(echeck.fingerprint)${organizationId ? ' AND organization_id = :org' : ''}`,
        ExpressionAttributeValues: { ':paymethod': PAYMETHOD_ENTITY, ':card': 'card', ':echeck': 'echeck', ...(organizationId ? { ':org': organizationId } : {}) },
        ...(resume ? { ExclusiveStartKey: JSON.parse(Buffer.from(resume, 'base64url').toString('utf8')) as Record<string, unknown> } : {}),
      }),
    );
    const records = (result.Items ?? []).map((item) => {
      const secret = item[SECRET_ATTRIBUTE] as SealedSecret | undefined;
      return { paymethod: paymethodFromItem(item), ...(secret ? { secret } : {}) };
    });
    const next = result.LastEvaluatedKey ? Buffer.from(JSON.stringify(result.LastEvaluatedKey), 'utf8').toString('base64url') : undefined;
    return { records, ...(next ? { resume: next } : {}) };
  }

  async setFingerprint(paymethod: Paymethod, fingerprint: string): Promise<'written' | 'changed'> {
    const kind = paymethod.card ? 'card' : 'echeck';
    const fingerprinted = { ...paymethod, [kind]: { ...paymethod[kind], fingerprint } };
    const indexKey = keys.paymethodByFingerprint(paymethod.organization_id, fingerprint, paymethod.created_at, paymethod.paymethod_token);
    const membership = this.scopes.join(fingerprinted)!;
    try {
      await this.client.send(
        new TransactWriteCommand({
          ClientRequestToken: randomUUID(),
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keys.paymethod(paymethod.paymethod_token),
                // The version moves on, so a concurrent update written from an older read fails instead of dropping the member.
                UpdateExpression: 'SET #kind.fingerprint = :fingerprint, gsi7pk = :gsi7pk, gsi7sk = :gsi7sk, #version = :next',
                ConditionExpression: '#version = :expected AND attribute_not_exists(#kind.fingerprint)',
                ExpressionAttributeNames: { '#kind': kind, '#version': VERSION_ATTRIBUTE },
                ExpressionAttributeValues: { ':fingerprint': fingerprint, ':gsi7pk': indexKey.gsi7pk, ':gsi7sk': indexKey.gsi7sk, ':expected': paymethod.version, ':next': paymethod.version + 1 },
              },
            },
            membership,
          ],
        }),
      );
      return 'written';
    } catch (error) {
      if ((error as Error).name === 'TransactionCanceledException') return 'changed';
      throw error;
    }
  }
}
