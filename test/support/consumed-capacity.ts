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
 * capacity of every GetItem and Query and records it, so a test can measure
 * what a repository's reads cost without the repository knowing.
 */
export function capacityRecordingClient(): { client: DynamoDBDocumentClient; reads: ReadReport[] } {
  const reads: ReadReport[] = [];
  const base = new DynamoDBClient({});
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = context.commandName?.replace(/Command$/, '') ?? 'unknown';
      const measured = operation === 'Query' || operation === 'GetItem';
      const input = args.input as { ReturnConsumedCapacity?: string; IndexName?: string };
      if (measured) input.ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      if (measured) {
        const output = result.output as { ConsumedCapacity?: { CapacityUnits?: number }; ScannedCount?: number; Item?: unknown };
        reads.push({
          operation,
          ...(input.IndexName ? { index: input.IndexName } : {}),
          consumedCapacity: output.ConsumedCapacity?.CapacityUnits,
          scannedCount: operation === 'GetItem' ? (output.Item ? 1 : 0) : output.ScannedCount,
        });
      }
      return result;
    },
    { step: 'initialize', name: 'recordConsumedCapacity' },
  );
  return { client: DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } }), reads };
}
