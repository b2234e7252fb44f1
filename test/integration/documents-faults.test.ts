/**
 * Failures at each step of an upload and a delete, injected in-process with
 * aws-sdk-client-mock while every other call reaches the real DynamoDB Local
 * and s3rver. The state is then read back through the running service over
 * HTTP (another process, not mocked) and the stores.
 */
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, PutObjectTaggingCommand, S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BOUNDARY, multipartBody, png, uploadParts } from '../fixtures/documents.ts';
import { call } from '../support/api.ts';
import type { Identity } from '../support/api.ts';
import { documentsPath, runtimeStores, scanned, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';
import { VerdictTooEarly } from '#shared/domain/documents/scan-result.ts';
import { MALWARE_SCAN } from '#shared/platform/triggers.ts';
import { DynamoDocumentRepository } from '#shared/store/documents.ts';
import { interpose, throttled } from '../support/faults.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';
import type { ProxyHandler } from '../support/lambda-event.ts';

const realS3Send = S3Client.prototype.send as never;
const realDocumentSend = DynamoDBDocumentClient.prototype.send as never;
/** S3 refusing a request it did not process (503 Slow Down): nothing was deleted. */
const slowDown = (command: string) => Object.assign(new Error(`${command}: Slow Down (injected)`), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } });

describe('documents: failures leave no orphan and no half-deleted document', () => {
  let stores: RuntimeStores;
  let org: Identity;
  let create: ProxyHandler;
  let remove: ProxyHandler;
  let recordScan: (event: unknown, context: unknown) => Promise<void>;
  const s3Mock = mockClient(S3Client);
  const dynamoMock = mockClient(DynamoDBDocumentClient);
  const s3 = interpose(s3Mock as never, realS3Send, [PutObjectCommand, DeleteObjectCommand, HeadObjectCommand, GetObjectCommand, CopyObjectCommand, ListObjectsV2Command, PutObjectTaggingCommand]);
  const dynamo = interpose(dynamoMock as never, realDocumentSend, [PutCommand, GetCommand, UpdateCommand, DeleteCommand, QueryCommand, TransactWriteCommand]);

  beforeAll(async () => {
    stores = runtimeStores(); // also points this process's handlers at the runtime's stores
    org = await stores.freshOrganization();
    create = (await import('#functions/documents-create.ts')).handler as unknown as ProxyHandler;
    remove = (await import('#functions/documents-delete.ts')).handler as unknown as ProxyHandler;
    recordScan = (await import('#functions/documents-scan-result.ts')).handler as never;
  });
  beforeEach(() => {
    s3.failOn();
    dynamo.failOn();
  });
  afterAll(() => {
    s3Mock.restore();
    dynamoMock.restore();
    stores?.destroy();
  });

  // A resource_id per document: the same bytes twice for one resource_id are refused as a duplicate.
  let documents = 0;
  const nextResourceId = () => `app_f${(documents += 1)}`;
  const invokeCreate = () =>
    create(
      proxyEvent({
        method: 'POST',
        resource: '/v3/organizations/{organization_id}/documents',
        path: documentsPath(org.organizationId),
        pathParameters: { organization_id: org.organizationId },
        organizationId: org.organizationId,
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
        body: multipartBody(uploadParts({ resource: 'application', resource_id: nextResourceId() }, { name: 'a.png', contentType: 'image/png', bytes: png }), BOUNDARY),
      }),
      lambdaContext('documents-create'),
    );
  const invokeDelete = (documentId: string) =>
    remove(
      proxyEvent({
        method: 'DELETE',
        resource: '/v3/organizations/{organization_id}/documents/{document_id}',
        path: documentsPath(org.organizationId, documentId),
        pathParameters: { organization_id: org.organizationId, document_id: documentId },
        organizationId: org.organizationId,
      }),
      lambdaContext('documents-delete'),
    );
  const keysOf = async (documentId: string) => (await stores.objectKeys(org.organizationId)).filter((key) => key.endsWith(documentId));
  const itemsOf = async (documentId: string) => (await stores.documentItems(org.organizationId)).filter((item) => (item.document_id as { S?: string } | undefined)?.S === documentId);
  const documentsNow = async () => ({ keys: await stores.objectKeys(org.organizationId), items: await stores.documentItems(org.organizationId) });

  async function expectWhole(documentId: string): Promise<void> {
    const got = await call(documentsPath(org.organizationId, documentId), { as: org });
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('available');
    expect((await scanned(org, documentId)).body.scan_status).toBe('clean');
    const download = await call(`${documentsPath(org.organizationId, documentId)}/file`, { as: org });
    expect(download.status).toBe(302);
    expect(Buffer.from(await (await fetch(download.headers.get('location') as string)).arrayBuffer()).equals(png)).toBe(true);
    const listed = await call<{ results: Array<{ document_id: string }> }>(documentsPath(org.organizationId), { as: org });
    expect(listed.body.results.map((result) => result.document_id)).toContain(documentId);
  }

  async function expectGone(documentId: string): Promise<void> {
    expect((await call(documentsPath(org.organizationId, documentId), { as: org })).status).toBe(404);
    expect(await keysOf(documentId)).toEqual([]);
    expect(await itemsOf(documentId)).toEqual([]);
  }

  async function created(): Promise<string> {
    const answer = await upload(org, { resource: 'application', resource_id: nextResourceId() }, { name: 'a.png', contentType: 'image/png', bytes: png });
    expect(answer.status).toBe(201);
    return answer.body.document_id as string;
  }

  describe('upload', () => {
    it('S3 put fails: 503, nothing stored, no record written', async () => {
      const before = await documentsNow();
      s3.failOn({ command: 'PutObjectCommand' });
      const answer = await invokeCreate();
      expect(answer.statusCode).toBe(503);
      expect(answer.headers?.['Retry-After']).toBe('1');
      expect(dynamo.calls('TransactWriteCommand')).toEqual([]);
      expect(await documentsNow()).toEqual(before);
    });

    it('DynamoDB refuses the put: 503, and the stored object is deleted again', async () => {
      const before = await documentsNow();
      dynamo.failOn({ command: 'TransactWriteCommand', error: throttled });
      const answer = await invokeCreate();
      expect(answer.statusCode).toBe(503);
      expect(JSON.parse(answer.body).response.response_code).toBe('SERVICE_UNAVAILABLE');
      const put = s3.calls('PutObjectCommand')[0]?.input.Key;
      expect(s3.calls('DeleteObjectCommand').map((entry) => entry.input.Key)).toEqual([put]);
      expect(await documentsNow()).toEqual(before);
    });

    it('DynamoDB put fails with an unknown outcome (5xx): 503 OUTCOME_UNKNOWN, and the object stays, since the record may exist', async () => {
      const before = await documentsNow();
      dynamo.failOn({ command: 'TransactWriteCommand' });
      const answer = await invokeCreate();
      expect(answer.statusCode).toBe(503);
      expect(JSON.parse(answer.body).response.response_code).toBe('OUTCOME_UNKNOWN');
      expect(s3.calls('DeleteObjectCommand')).toEqual([]);
      const put = s3.calls('PutObjectCommand')[0]?.input.Key as string;
      const now = await documentsNow();
      expect(now.items).toEqual(before.items);
      expect(now.keys).toEqual([...before.keys, put].sort());
    });

    it('succeeds once the dependency is back', async () => {
      const answer = await invokeCreate();
      expect(answer.statusCode).toBe(201);
      await expectWhole((JSON.parse(answer.body) as { document_id: string }).document_id);
    });
  });

  describe('delete', () => {
    it('flagging the record fails: 503, the document is untouched', async () => {
      const id = await created();
      dynamo.failOn({ command: 'UpdateCommand' });
      expect((await invokeDelete(id)).statusCode).toBe(503);
      expect(s3.calls('DeleteObjectCommand')).toEqual([]);
      await expectWhole(id);
    });

    it('the file store refuses the delete: 503, the record is put back, the document stays whole', async () => {
      const id = await created();
      s3.failOn({ command: 'DeleteObjectCommand', error: slowDown });
      expect((await invokeDelete(id)).statusCode).toBe(503);
      expect(dynamo.calls('TransactWriteCommand')).toEqual([]);
      await expectWhole(id);
      s3.failOn();
      expect((await invokeDelete(id)).statusCode).toBe(200);
      await expectGone(id);
    });

    it.each([
      ['landed, its answer lost', { landed: true }],
      ['failed in a way that may have landed (a 5xx)', { landed: false }],
    ])('deleting the file %s: 503, hidden (never an available record without its file), and a retry completes', async (_label, { landed }) => {
      const id = await created();
      s3.failOn({ command: 'DeleteObjectCommand', landed });
      const answer = await invokeDelete(id);
      expect(answer.statusCode).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({ response: { response_code: 'OUTCOME_UNKNOWN' } });
      expect(await keysOf(id)).toHaveLength(landed ? 0 : 1);
      expect((await call(documentsPath(org.organizationId, id), { as: org })).status).toBe(404);
      s3.failOn();
      expect((await invokeDelete(id)).statusCode).toBe(200);
      await expectGone(id);
    });

    it('deleting the file and putting the record back both fail: hidden but whole, and a retry completes', async () => {
      const id = await created();
      s3.failOn({ command: 'DeleteObjectCommand', error: slowDown });
      dynamo.failOn({ command: 'UpdateCommand', when: (input) => String(input.UpdateExpression).includes(':previous') });
      expect((await invokeDelete(id)).statusCode).toBe(503);
      expect(await keysOf(id)).toHaveLength(1);
      expect((await call(documentsPath(org.organizationId, id), { as: org })).status).toBe(404);
      s3.failOn();
      dynamo.failOn();
      expect((await invokeDelete(id)).statusCode).toBe(200);
      await expectGone(id);
    });

    it('deleting the record fails: 503, the document already answers 404, and a retry completes', async () => {
      const id = await created();
      dynamo.failOn({ command: 'TransactWriteCommand' });
      expect((await invokeDelete(id)).statusCode).toBe(503);
      expect(await keysOf(id)).toEqual([]);
      expect((await call(documentsPath(org.organizationId, id), { as: org })).status).toBe(404);
      expect((await call(`${documentsPath(org.organizationId, id)}/file`, { as: org })).status).toBe(404);
      const listed = await call<{ results: Array<{ document_id: string }> }>(documentsPath(org.organizationId), { as: org });
      expect(listed.body.results.map((result) => result.document_id)).not.toContain(id);
      dynamo.failOn();
      const retried = await invokeDelete(id);
      expect(retried.statusCode).toBe(200);
      expect(JSON.parse(retried.body)).toMatchObject({ document_id: id, response: { response_desc: 'Delete Successful.' } });
      await expectGone(id);
    });
  });

  // GuardDuty's verdict can come while the record that keeps the file is still changing. The runtime's own scanner
  // reports each of these files too; here the same handler is invoked at the moment that matters.
  describe('a scan result that arrives before its record settles waits for it (the retry records it)', () => {
    // As GuardDuty does: the object's tag first (the bucket serves nothing else), then the event.
    const scanResult = async (objectKey: string) => {
      await stores.s3.send(new PutObjectTaggingCommand({ Bucket: stores.bucket, Key: objectKey, Tagging: { TagSet: [{ Key: MALWARE_SCAN.tagKey, Value: 'NO_THREATS_FOUND' }] } })).catch((error: unknown) => {
        if ((error as Error).name !== 'NoSuchKey') throw error;
      });
      return recordScan(
        {
          id: `scan-${objectKey}`,
          source: 'aws.guardduty',
          'detail-type': 'GuardDuty Malware Protection Object Scan Result',
          detail: { s3ObjectDetails: { bucketName: stores.bucket, objectKey }, scanResultDetails: { scanResultStatus: 'NO_THREATS_FOUND' } },
        },
        lambdaContext('documents-scan-result'),
      );
    };

    it('while a delete that S3 then refuses holds the record', async () => {
      const id = await created();
      const repository = new DynamoDocumentRepository(stores.documentClient, stores.tableName);
      const flagged = await repository.markDeleting(org.organizationId, id, '2026-01-01');
      if (!flagged || flagged === 'retained') throw new Error(`document ${id} was not flagged`);
      await expect(scanResult(flagged.object_key as string)).rejects.toBeInstanceOf(VerdictTooEarly);
      // The refused delete puts the record back; the retried result is recorded and the document is served.
      await repository.restore(flagged);
      await scanResult(flagged.object_key as string);
      expect((await call(documentsPath(org.organizationId, id), { as: org })).body.scan_status).toBe('clean');
      await expectWhole(id);
    });

    it('while a single-request upload has stored its file and not yet its record', async () => {
      const objectKey = `documents/${org.organizationId}/doc_early${documents}`;
      await stores.s3.send(new PutObjectCommand({ Bucket: stores.bucket, Key: objectKey, Body: png }));
      await expect(scanResult(objectKey)).rejects.toBeInstanceOf(VerdictTooEarly);
      // The create failed and removed its file: nothing will keep it, and the result is ignored.
      await stores.s3.send(new DeleteObjectCommand({ Bucket: stores.bucket, Key: objectKey }));
      await expect(scanResult(objectKey)).resolves.toBeUndefined();
    });
  });
});
