import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_BUDGET, awsClient } from './client-config.ts';

/** The document client shares the base client's middleware stack: budget, deadline and tracing apply to it (client-config.ts). */
export const dynamo = DynamoDBDocumentClient.from(awsClient(DynamoDBClient, 'DynamoDB', DYNAMODB_BUDGET), {
  marshallOptions: { removeUndefinedValues: true },
});
