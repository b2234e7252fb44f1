import { config } from '#shared/config.ts';
import type { DocumentDeps } from '#shared/domain/documents/ports.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { S3DocumentFiles } from './document-files.ts';
import { dynamo } from './dynamodb.ts';
import { s3 } from './s3.ts';

/** The document adapters, built once per container on the module-scope clients. */
export function documentDeps(): DocumentDeps {
  return {
    documents: new DynamoDocumentRepository(dynamo, config.tableName),
    files: new S3DocumentFiles(s3, config.documentsBucket, config.documentsKmsKeyId),
  };
}

/** The records alone, for routes that never touch a file (get, list): their bundles carry no S3 client. */
export function documentRecordDeps(): Pick<DocumentDeps, 'documents'> {
  return { documents: new DynamoDocumentRepository(dynamo, config.tableName) };
}
