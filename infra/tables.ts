import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { TTL_ATTRIBUTE } from '#shared/platform/table.ts';
import type { EnvironmentSettings } from './environments.ts';

/**
 * A table of the service that is a log or working state rather than records
 * (the Account Updater's history, the webhook deliveries): string keys, TTL,
 * on demand, point-in-time recovery, no index and no stream. AWS managed
 * encryption like the paymethod table: no account number is ever in one.
 */
export function plainTable(scope: Construct, id: string, key: { partitionKey: string; sortKey: string }, environment: Pick<EnvironmentSettings, 'deletionProtection' | 'removalPolicy'>): Table {
  return new Table(scope, id, {
    partitionKey: { name: key.partitionKey, type: AttributeType.STRING },
    sortKey: { name: key.sortKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: TTL_ATTRIBUTE,
    encryption: TableEncryption.AWS_MANAGED,
    deletionProtection: environment.deletionProtection,
    removalPolicy: environment.removalPolicy,
  });
}
