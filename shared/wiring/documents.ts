import { S3DocumentFiles } from '#shared/aws/document-files.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/config.ts';
import type { DocumentDeps } from '#shared/domain/documents/ports.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { once } from './once.ts';

/** The document adapters, on the module-scope clients. */
export const documentDeps = /* @__PURE__ */ once(
  (): DocumentDeps => ({
    documents: new DynamoDocumentRepository(dynamo, config.tableName),
    files: new S3DocumentFiles(s3, config.documentsBucket, config.documentsKmsKeyId),
  }),
);
