import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tracer } from '#shared/observability/tracer.ts';

/**
 * Built once per container; the endpoint comes from AWS_ENDPOINT_URL_DYNAMODB when set.
 * Traced as X-Ray subsegments in Lambda (the document client shares the base client's middleware).
 */
export const dynamo = DynamoDBDocumentClient.from(tracer.captureAWSv3Client(new DynamoDBClient({})), {
  marshallOptions: { removeUndefinedValues: true },
});
