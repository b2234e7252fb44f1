import { S3DocumentFiles } from '#shared/aws/document-files.ts';
import { dynamo } from '#shared/aws/dynamodb.ts';
import { s3 } from '#shared/aws/s3.ts';
import { config } from '#shared/runtime/config.ts';
import type { DocumentDeps, DocumentFiles } from '#shared/domain/documents/ports.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { once } from './once.ts';

const documentRepository = /* @__PURE__ */ once(() => new DynamoDocumentRepository(dynamo, config.tableName));
const documentFiles = /* @__PURE__ */ once((): DocumentFiles => new S3DocumentFiles(s3, config.documentsBucket, config.documentsKmsKeyId));

/**
 * The document adapters. The file store is built when a use case first touches
 * it: the read routes (get, list) are granted no bucket access and have no
 * DOCUMENTS_BUCKET, so building it up front would fail them.
 */
export const documentDeps = (): DocumentDeps => ({
  documents: documentRepository(),
  get files() {
    return documentFiles();
  },
});

/** The records alone, for the routes that never touch a file (get, list): their bundles carry no S3 client. */
export const documentRecordDeps = (): Pick<DocumentDeps, 'documents'> => ({ documents: documentRepository() });
