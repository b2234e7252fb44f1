import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KmsSecretHasher } from '#shared/aws/credential-hasher.ts';
import { issueCredential } from '#shared/domain/credentials.ts';
import { randomBase62 } from '#shared/domain/ids.ts';
import { registerOrganization } from '#shared/domain/tenancy.ts';
import { DynamoCredentialStore } from '#shared/store/credentials.ts';
import { DynamoOrganizationStore } from '#shared/store/organizations.ts';
import { BOUNDARY, multipartBody, uploadParts } from '../fixtures/documents.ts';
import type { Part } from '../fixtures/documents.ts';
import type { ApiAnswer, Identity } from './api.ts';
import { call, useRuntimeEnvironment } from './api.ts';

/** In-process access to the running runtime's stores, to see what a request left behind. */
export function runtimeStores() {
  const environment = useRuntimeEnvironment();
  const credentials = { accessKeyId: environment.AWS_ACCESS_KEY_ID as string, secretAccessKey: environment.AWS_SECRET_ACCESS_KEY as string };
  const region = environment.AWS_REGION as string;
  const dynamodb = new DynamoDBClient({ region, credentials, endpoint: environment.AWS_ENDPOINT_URL_DYNAMODB });
  const s3 = new S3Client({ region, credentials, endpoint: environment.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
  const kms = new KMSClient({ region, credentials, endpoint: environment.AWS_ENDPOINT_URL_KMS });
  const tableName = environment.TABLE_NAME as string;
  const bucket = environment.DOCUMENTS_BUCKET as string;
  const documentClient = DynamoDBDocumentClient.from(dynamodb);

  return {
    s3,
    bucket,
    tableName,
    documentClient,
    /** Object keys under documents/<org>/ and uploads/<org>/. */
    async objectKeys(organizationId: string): Promise<string[]> {
      const keys: string[] = [];
      for (const prefix of [`documents/${organizationId}/`, `uploads/${organizationId}/`]) {
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
        keys.push(...(listed.Contents ?? []).map((object) => object.Key as string));
      }
      return keys;
    },
    /** Document items of an organization (a test-only Scan: the service itself never scans). */
    async documentItems(organizationId: string): Promise<Array<Record<string, unknown>>> {
      const items: Array<Record<string, unknown>> = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await dynamodb.send(
          new ScanCommand({
            TableName: tableName,
            FilterExpression: 'begins_with(pk, :prefix)',
            ExpressionAttributeValues: { ':prefix': { S: `DOC#${organizationId}#` } },
            ExclusiveStartKey: start as never,
          }),
        );
        items.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
      return items;
    },
    /** A new organization with its own credentials, so a test can assert on everything stored under it. */
    async freshOrganization(parentOrganizationId?: string): Promise<Identity> {
      const organizationId = `org_t${randomBase62(12)}`;
      const organizations = new DynamoOrganizationStore(documentClient, tableName);
      await registerOrganization({ organizationId, ...(parentOrganizationId ? { parentOrganizationId } : {}) }, organizations);
      const issued = await issueCredential(
        { organizationId },
        { organizations, credentials: new DynamoCredentialStore(documentClient, tableName), hasher: new KmsSecretHasher(kms, environment.CREDENTIAL_MAC_KEY_ID as string) },
      );
      return { organizationId, accessId: issued.api_access_id, secureKey: issued.api_secure_key };
    },
    destroy() {
      dynamodb.destroy();
      s3.destroy();
      kms.destroy();
    },
  };
}

export type RuntimeStores = ReturnType<typeof runtimeStores>;

export function documentsPath(organizationId: string, ...rest: string[]): string {
  return ['/v3/organizations', organizationId, 'documents', ...rest].join('/');
}

/** POSTs a multipart body (parts as given) to the upload route. */
export function postParts(as: Identity, parts: readonly Part[], options: { boundary?: string; contentType?: string; close?: boolean; organizationId?: string } = {}): Promise<ApiAnswer> {
  const boundary = options.boundary ?? BOUNDARY;
  return call(documentsPath(options.organizationId ?? as.organizationId), {
    method: 'POST',
    as,
    rawBody: multipartBody(parts, boundary, { close: options.close }),
    headers: { 'Content-Type': options.contentType ?? `multipart/form-data; boundary=${boundary}` },
  });
}

export function upload(as: Identity, metadata: unknown, file: { name: string; contentType?: string; bytes: Buffer }): Promise<ApiAnswer> {
  return postParts(as, uploadParts(metadata, file));
}

/** The document once its malware scan has ended (the local scanner reports within 10 s of the upload; the wait is longer so a loaded machine does not fail a test on time). */
export async function scanned(as: Identity, documentId: string, timeoutMs = 30_000): Promise<ApiAnswer> {
  const deadline = Date.now() + timeoutMs;
  let answer = await call(documentsPath(as.organizationId, documentId), { as });
  while (answer.body?.scan_status === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    answer = await call(documentsPath(as.organizationId, documentId), { as });
  }
  return answer;
}
