import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** What one read cost. */
export interface ReadReport {
  operation: string;
  index?: string;
  consumedCapacity?: number;
  scannedCount?: number;
}

/**
 * A document client of the test's own that asks DynamoDB for the consumed
 * capacity of every GetItem, BatchGetItem and Query and records it (for
 * BatchGetItem, `scannedCount` is the number of items returned), so a test can measure
 * what a repository's reads cost without the repository knowing.
 */
export function capacityRecordingClient(): { client: DynamoDBDocumentClient; reads: ReadReport[] } {
  const reads: ReadReport[] = [];
  const base = new DynamoDBClient({});
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = context.commandName?.replace(/Command$/, '') ?? 'unknown';
      const measured = operation === 'Query' || operation === 'GetItem' || operation === 'BatchGetItem';
      const input = args.input as { ReturnConsumedCapacity?: string; IndexName?: string };
      if (measured) input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      if (measured) {
        const output = result.output as {
          ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }>;
          ScannedCount?: number;
          Item?: unknown;
          Responses?: Record<string, unknown[]>;
        };
        const returned = Object.values(output.Responses ?? {}).reduce((sum, items) => sum + items.length, 0);
        reads.push({
          operation,
          ...(input.IndexName ? { index: input.IndexName } : {}),
          consumedCapacity: [output.ConsumedCapacity ?? []].flat().reduce<number | undefined>((sum, entry) => (sum ?? 0) + (entry.CapacityUnits ?? 0), undefined),
          scannedCount: operation === 'GetItem' ? (output.Item ? 1 : 0) : operation === 'BatchGetItem' ? returned : output.ScannedCount,
        });
      }
      return result;
    },
    { step: 'initialize', name: 'recordConsumedCapacity' },
  );
  return { client: DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } }), reads };
}
