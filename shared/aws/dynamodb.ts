import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tracer } from '#shared/observability/tracer.ts';
import { DYNAMODB_BUDGET, applyRequestDeadline, clientBudget, withoutSdkLogger } from './client-config.ts';

/**
 * Built once per container; the endpoint comes from AWS_ENDPOINT_URL_DYNAMODB when set.
 * Traced as X-Ray subsegments in Lambda (the document client shares the base client's middleware),
 * and bounded by the client budget and the request deadline (client-config.ts).
 */
export const dynamo = DynamoDBDocumentClient.from(tracer.captureAWSv3Client(applyRequestDeadline(withoutSdkLogger(new DynamoDBClient(clientBudget(DYNAMODB_BUDGET))), 'DynamoDB')), {
  marshallOptions: { removeUndefinedValues: true },
});
