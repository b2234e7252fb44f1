import { config } from '#shared/config.ts';
import type { DocumentDeps } from '#shared/domain/documents/ports.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { S3DocumentFiles } from '#shared/aws/document-files.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { s3 } from '#shared/aws/s3.ts';

/** The document adapters, built once per container on the module-scope clients. */
export function documentDeps(): DocumentDeps {
  return {
    documents: new DynamoDocumentRepository(dynamo, config.tableName),
    files: new S3DocumentFiles(s3, config.documentsBucket, config.documentsKmsKeyId),
  };
}
