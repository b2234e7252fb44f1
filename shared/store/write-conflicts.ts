import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';

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
