import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { commitWrite } from '#shared/runtime/outcome.ts';

/** One item of a TransactWriteItems call; each item's owner builds it (keys.ts and the repositories). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** TransactWriteItems' limit of items per call. */
export const TRANSACTION_ITEMS = 100;

/** A conditional write DynamoDB refused because its condition did not hold. */
export function isConditionFailure(error: unknown): error is ConditionalCheckFailedException {
  return error instanceof ConditionalCheckFailedException;
}

/**
 * Why each item of a cancelled transaction was refused (`ConditionalCheckFailed`,
 * `TransactionConflict`, ...; undefined for an item that was not the cause),
 * in the order of the transaction's items; undefined when `error` is not a
 * transaction cancellation.
 */
export function cancellationReasons(error: unknown, itemCount: number): Array<string | undefined> | undefined {
  if (!(error instanceof TransactionCanceledException)) return undefined;
  return Array.from({ length: itemCount }, (_item, index) => error.CancellationReasons?.[index]?.Code);
}

/**
 * Commits `items` in one transaction: 'ok', or the cancellation reason code
 * of each item. The commit point of every paymethod write: a timeout after
 * sending is OutcomeUnknown, never a plain 503. The token makes the SDK's
 * retry of an attempt that did land succeed instead of failing its own
 * conditions.
 */
export async function transact(client: Pick<DynamoDBDocumentClient, 'send'>, items: TransactItem[]): Promise<'ok' | Array<string | undefined>> {
  try {
    await commitWrite(() => client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() })));
    return 'ok';
  } catch (error) {
    const reasons = cancellationReasons(error, items.length);
    if (!reasons) throw error;
    return reasons;
  }
}
