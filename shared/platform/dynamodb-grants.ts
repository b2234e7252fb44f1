/**
 * What each function may do to the DynamoDB tables, as data: CDK turns these
 * grants into IAM statements (infra/access.ts), and the local runtime refuses
 * whatever they do not allow, as IAM would (local/dynamodb-gate.ts). A write
 * outside the item kinds a function declares then fails in every test, not
 * first in AWS. Nothing here imports the AWS SDK or CDK.
 */
import type { ItemKind } from './item-kinds.ts';
import { ITEM_PARTITION_PREFIXES } from './item-kinds.ts';

export type DynamoAction = 'GetItem' | 'Query' | 'BatchGetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem' | 'BatchWriteItem';

/** The service's single table, the Account Updater's history table, or the webhook deliveries table. */
export type GrantedTable = 'table' | 'auHistory' | 'webhooks';

export interface DynamoGrant {
  readonly table: GrantedTable;
  readonly actions: readonly DynamoAction[];
  /** Query on each of the table's indexes too (IAM names them one by one). */
  readonly indexes?: boolean;
  /** Only items whose partition key starts with one of these kinds' prefixes (IAM's `dynamodb:LeadingKeys`). */
  readonly items?: readonly ItemKind[];
}

/** The part of a function's declared access (shared/platform/function-environment.ts) its grants follow from. */
export interface TableAccess {
  readonly table?: 'read' | 'write';
  readonly writes?: readonly ItemKind[];
  readonly pageBoundaries?: boolean;
  /** The webhook deliveries table: reads, writes of these item kinds, and parking in batches (BatchWriteItem of parked entries). */
  readonly webhookDeliveries?: { readonly writes?: readonly ItemKind[]; readonly parks?: boolean };
  readonly auHistory?: 'read' | 'write';
  readonly dynamodb?: readonly DynamoGrant[];
}

export const TABLE_READ_ACTIONS: readonly DynamoAction[] = ['GetItem', 'Query', 'BatchGetItem'];
/**
 * IAM has no TransactWriteItems action: each item of a transaction is
 * authorized by its own PutItem, UpdateItem, DeleteItem or ConditionCheckItem,
 * with that item's partition key as the leading key.
 */
export const TABLE_WRITE_ACTIONS: readonly DynamoAction[] = ['PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'];

/**
 * A function's grants: its own (`access.dynamodb`) when it declares them, else
 * those its table access implies: reads of the table and its indexes, writes
 * of the item kinds it declares, page boundaries for list functions, and the
 * webhook deliveries table's reads and writes for the webhook functions.
 */
export function dynamodbGrants(access: TableAccess): DynamoGrant[] {
  if (access.dynamodb) return [...access.dynamodb];
  const grants: DynamoGrant[] = [];
  if (access.table) grants.push({ table: 'table', actions: TABLE_READ_ACTIONS, indexes: true });
  if (access.table === 'write') {
    if (!access.writes?.length) throw new Error('table write access must name the item kinds it writes (writes)');
    grants.push({ table: 'table', actions: TABLE_WRITE_ACTIONS, items: access.writes });
  } else if (access.writes?.length) {
    throw new Error('writes are declared, but table access is not write');
  }
  if (access.pageBoundaries) grants.push({ table: 'table', actions: ['BatchWriteItem'], items: ['pageBoundary'] });
  if (access.webhookDeliveries) {
    const { writes, parks } = access.webhookDeliveries;
    grants.push({ table: 'webhooks', actions: TABLE_READ_ACTIONS });
    if (writes?.length) grants.push({ table: 'webhooks', actions: TABLE_WRITE_ACTIONS, items: writes });
    if (parks) grants.push({ table: 'webhooks', actions: ['BatchWriteItem'], items: ['webhookParked'] });
  }
  if (access.auHistory) throw new Error('auHistory access needs its grants declared (dynamodb)');
  return grants;
}

/** The partition-key patterns of a grant's item kinds, as IAM's StringLike takes them. */
export function leadingKeyPatterns(items: readonly ItemKind[]): string[] {
  return items.map((kind) => `${ITEM_PARTITION_PREFIXES[kind]}*`);
}

/** One action a request asks for, as IAM authorizes it: a transaction or batch is one of these per item. */
export interface RequestedAction {
  /** An action name as IAM spells it after `dynamodb:` (one no grant names, such as Scan, is never allowed). */
  readonly action: string;
  readonly table: GrantedTable;
  /** For a Query on an index. */
  readonly index?: string;
  /** The partition keys the action touches (empty for a read that names none). */
  readonly partitionKeys: readonly string[];
}

/**
 * IAM's reading of Allow statements: some grant names the action on the
 * resource (the table, or for Query an index when the grant includes them),
 * and, where it limits items, every partition key the action touches starts
 * with one of their prefixes (`ForAllValues:StringLike`).
 */
export function grantsAllow(grants: readonly DynamoGrant[], requested: RequestedAction): boolean {
  return grants.some((grant) => {
    if (grant.table !== requested.table || !(grant.actions as readonly string[]).includes(requested.action)) return false;
    if (requested.index !== undefined && !(grant.indexes && requested.action === 'Query')) return false;
    if (!grant.items) return true;
    const prefixes = grant.items.map((kind) => ITEM_PARTITION_PREFIXES[kind]);
    return requested.partitionKeys.every((key) => prefixes.some((prefix) => key.startsWith(prefix)));
  });
}
