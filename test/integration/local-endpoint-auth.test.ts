import { stat } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { eventsFilePath, runtimeFilePath } from '../../local/runtime-file.ts';
import type { SigningCredential } from '../../local/signing-credentials.ts';
import { generateSigningCredentials } from '../../local/signing-credentials.ts';
import { baseUrl, call, useRuntimeEnvironment } from '../support/api.ts';
import { runtimeStores } from '../support/documents.ts';
import { signedFetch } from '../support/signed-fetch.ts';

/**
 * The attacks the security review replayed against `npm start`'s endpoints,
 * by a process on the same machine that has not read the runtime's 0600 file:
 * unsigned, wrongly signed or stale calls to S3, DynamoDB, KMS, Secrets
 * Manager and EventBridge, an upload form re-pointed at another document, and
 * Host names that are not loopback's. Each is refused as the service refuses
 * it; the operator's signed calls (what the CLIs and these tests use) work.
 */
const environment = useRuntimeEnvironment();
const operator: SigningCredential = { accessKeyId: environment.AWS_ACCESS_KEY_ID!, secretAccessKey: environment.AWS_SECRET_ACCESS_KEY! };
const s3Endpoint = environment.AWS_ENDPOINT_URL_S3!;
const documentsBucket = environment.DOCUMENTS_BUCKET!;
const reportsBucket = environment.REPORTS_BUCKET!;
const stores = runtimeStores();
const repoRoot = path.resolve(import.meta.dirname, '../..');
afterAll(() => stores.destroy());

const s3Error = async (answer: Response) => ({ status: answer.status, code: /<Code>([^<]+)<\/Code>/.exec(await answer.text())?.[1] });
const jsonError = async (answer: Response) => ({ status: answer.status, type: ((await answer.json()) as { __type: string }).__type.replace(/^.*#/, '') });

interface UploadSession {
  document_id: string;
  upload: { url: string; fields: Record<string, string> };
}

async function openSession(fileName = 'evidence.txt'): Promise<UploadSession> {
  const answer = await call<UploadSession>(`/v3/organizations/org_200/documents/uploads`, { method: 'POST', body: { resource: 'application', resource_id: 'app_auth1', file_name: fileName } });
  expect(answer.status).toBe(201);
  return answer.body;
}

function postForm(url: string, fields: Record<string, string>, file: Buffer, contentType = 'text/plain'): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([new Uint8Array(file)], { type: contentType }), 'file.txt');
  return fetch(url, { method: 'POST', body: form });
}

async function objectBytes(bucket: string, key: string): Promise<string | undefined> {
  try {
    const { Body } = await stores.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await Body?.transformToString();
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey') return undefined;
    throw error;
  }
}

/**
 * The key the finalizer stored a session's file under, once it has moved it there (copied, then deleted the
 * upload key); bounded polling, as the S3 event is asynchronous.
 */
async function storedDocumentKey(documentId: string, uploadKey: string): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const keys = await stores.objectKeys('org_200');
    const stored = keys.find((key) => key.startsWith('documents/') && key.includes(documentId));
    if (stored && !keys.includes(uploadKey)) return stored;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`document ${documentId} was not moved to its stored key within 10 s`);
}

describe('the local S3 endpoint', () => {
  it('refuses unsigned GET, LIST and PUT, and an unsigned PUT into au-inbox/ changes nothing', async () => {
    const victim = await openSession();
    const victimKey = victim.upload.fields.key!;
    const original = 'the victim file';
    expect((await postForm(victim.upload.url, victim.upload.fields, Buffer.from(original))).status).toBe(204);

    const inboxKey = `au-inbox/org_100/attack-${Date.now()}.csv`;
    const attempts = [
      await fetch(`${s3Endpoint}/${documentsBucket}/${victimKey}`),
      await fetch(`${s3Endpoint}/${documentsBucket}?list-type=2&prefix=uploads/`),
      await fetch(`${s3Endpoint}/${documentsBucket}/${victimKey}`, { method: 'PUT', body: 'replaced' }),
      await fetch(`${s3Endpoint}/${reportsBucket}/${inboxKey}`, { method: 'PUT', body: 'paymethod_token,account_number\nmth_x,4111111111111111\n' }),
    ];
    expect(await Promise.all(attempts.map(s3Error))).toEqual(Array.from({ length: 4 }, () => ({ status: 403, code: 'AccessDenied' })));
    expect(await objectBytes(reportsBucket, inboxKey)).toBeUndefined();
  });

  it('refuses a signature by a key it never issued, a wrong secret and a stale date; the operator signed gets through', async () => {
    const key = `documents/org_200/probe-${Date.now()}`;
    const url = `${s3Endpoint}/${documentsBucket}/${key}`;
    const put = (credential: SigningCredential, signingDate?: Date) => signedFetch(url, { method: 'PUT', body: 'signed', signingDate }, credential, 's3');
    expect(await s3Error(await put(generateSigningCredentials([]).operator))).toEqual({ status: 403, code: 'InvalidAccessKeyId' });
    expect(await s3Error(await put({ ...operator, secretAccessKey: 'guess' }))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await s3Error(await put(operator, new Date(Date.now() - 16 * 60 * 1000)))).toEqual({ status: 403, code: 'RequestTimeTooSkewed' });
    expect(await objectBytes(documentsBucket, key)).toBeUndefined();
    expect((await put(operator)).status).toBe(200);
    expect(await objectBytes(documentsBucket, key)).toBe('signed');
    const listed = await stores.s3.send(new ListObjectsV2Command({ Bucket: documentsBucket, Prefix: key }));
    expect(listed.Contents?.map((object) => object.Key)).toEqual([key]);
  });

  it('refuses an upload form re-pointed at another document, and leaves that document as it was', async () => {
    const victim = await openSession();
    expect((await postForm(victim.upload.url, victim.upload.fields, Buffer.from('original bytes'))).status).toBe(204);
    // The finalizer moves the victim's file from its upload key to the document's own: wait for it, so what is
    // compared below is the stored document, not a key the finalizer is about to delete.
    const stored = await storedDocumentKey(victim.document_id, victim.upload.fields.key!);
    const victimFiles = async () => ({ upload: await objectBytes(documentsBucket, victim.upload.fields.key!), stored: await objectBytes(documentsBucket, stored) });
    const before = await victimFiles();
    expect(before).toEqual({ upload: undefined, stored: 'original bytes' });

    const attacker = await openSession();
    const repointed = await postForm(attacker.upload.url, { ...attacker.upload.fields, key: victim.upload.fields.key! }, Buffer.from('attacker bytes'));
    expect(await s3Error(repointed)).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await victimFiles()).toEqual(before);
    // Its policy altered to name the other key: the signature no longer holds.
    const policy = JSON.parse(Buffer.from(attacker.upload.fields.Policy!, 'base64').toString('utf8')) as { conditions: unknown[] };
    const rewritten = { ...policy, conditions: policy.conditions.map((condition) => (JSON.stringify(condition).includes('"key"') ? { key: victim.upload.fields.key } : condition)) };
    const forged = await postForm(attacker.upload.url, { ...attacker.upload.fields, key: victim.upload.fields.key!, Policy: Buffer.from(JSON.stringify(rewritten)).toString('base64') }, Buffer.from('attacker bytes'));
    expect(await s3Error(forged)).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await victimFiles()).toEqual(before);
  });

  it("enforces a form's policy as S3 does: size, fields not in the policy, an exact Content-Type, a declared SHA-256, and its expiry", async () => {
    const session = await openSession();
    const oversize = await postForm(session.upload.url, session.upload.fields, Buffer.alloc(8_000_001, 'a'));
    expect(await s3Error(oversize)).toEqual({ status: 400, code: 'EntityTooLarge' });
    const extra = await postForm(session.upload.url, { ...session.upload.fields, 'x-amz-meta-note': 'not in the policy' }, Buffer.from('x'));
    expect(await s3Error(extra)).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await objectBytes(documentsBucket, session.upload.fields.key!)).toBeUndefined();

    // Forms of the operator's own, with the conditions a form may carry.
    const s3 = new S3Client({ region: 'us-east-1', endpoint: s3Endpoint, forcePathStyle: true, credentials: operator });
    const key = `uploads/org_200/policy-${Date.now()}`;
    const typed = await createPresignedPost(s3, { Bucket: documentsBucket, Key: key, Fields: { 'Content-Type': 'text/plain' }, Conditions: [['content-length-range', 1, 100]], Expires: 60 });
    expect(await s3Error(await postForm(typed.url, { ...typed.fields, 'Content-Type': 'text/html' }, Buffer.from('x')))).toEqual({ status: 403, code: 'AccessDenied' });
    const digest = 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg='; // SHA-256 of "test"
    const checksummed = await createPresignedPost(s3, { Bucket: documentsBucket, Key: key, Fields: { 'x-amz-checksum-sha256': digest }, Expires: 60 });
    expect(await s3Error(await postForm(checksummed.url, checksummed.fields, Buffer.from('tset')))).toEqual({ status: 400, code: 'BadDigest' });
    expect(await s3Error(await postForm(checksummed.url, { ...checksummed.fields, 'x-amz-checksum-sha256': 'AAAA' }, Buffer.from('tset')))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await objectBytes(documentsBucket, key)).toBeUndefined();
    expect((await postForm(checksummed.url, checksummed.fields, Buffer.from('test'))).status).toBe(204);
    expect(await objectBytes(documentsBucket, key)).toBe('test');

    const brief = await createPresignedPost(s3, { Bucket: documentsBucket, Key: `${key}-late`, Expires: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await s3Error(await postForm(brief.url, brief.fields, Buffer.from('late')))).toEqual({ status: 403, code: 'AccessDenied' });
    s3.destroy();
  });
});

describe('the local DynamoDB, KMS, Secrets Manager and EventBridge endpoints', () => {
  it('refuse unsigned and wrongly signed calls in their own error shape', async () => {
    const json = (target: string) => ({ 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': target });
    const calls: Array<[string, string, Record<string, string>, string]> = [
      [environment.AWS_ENDPOINT_URL_DYNAMODB!, 'dynamodb', { ...json('DynamoDB_20120810.Scan'), 'Content-Type': 'application/x-amz-json-1.0' }, JSON.stringify({ TableName: environment.TABLE_NAME })],
      [environment.AWS_ENDPOINT_URL_KMS!, 'kms', json('TrentService.GenerateMac'), JSON.stringify({ KeyId: environment.FINGERPRINT_KEY_ID, Message: 'NDExMQ==', MacAlgorithm: 'HMAC_SHA_256' })],
      [environment.AWS_ENDPOINT_URL_SECRETS_MANAGER!, 'secretsmanager', json('secretsmanager.GetSecretValue'), JSON.stringify({ SecretId: environment.PAYPAL_SECRET_ARN })],
      [environment.AWS_ENDPOINT_URL_EVENTBRIDGE!, 'events', json('AWSEvents.PutEvents'), JSON.stringify({ Entries: [{ Source: 'payments.documents', DetailType: 'Document Deleted', Detail: '{}', EventBusName: environment.EVENT_BUS_NAME }] })],
    ];
    for (const [endpoint, service, headers, body] of calls) {
      expect(await jsonError(await fetch(endpoint, { method: 'POST', headers, body })), service).toEqual({ status: 400, type: 'MissingAuthenticationTokenException' });
      expect(await jsonError(await signedFetch(endpoint, { headers, body }, { ...operator, secretAccessKey: 'guess' }, service)), service).toEqual({ status: 400, type: 'InvalidSignatureException' });
      expect(await jsonError(await signedFetch(endpoint, { headers, body }, generateSigningCredentials([]).operator, service)), service).toEqual({ status: 400, type: 'UnrecognizedClientException' });
    }
    // Signed by the operator, the same call is served.
    const [kmsEndpoint, , kmsHeaders, kmsBody] = calls[1]!;
    expect((await signedFetch(kmsEndpoint, { headers: kmsHeaders, body: kmsBody }, operator, 'kms')).status).toBe(200);
  });
});

/** A GET with the Host header given (fetch sets its own). */
function getWithHost(url: string, host: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { headers: { ...headers, host } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('Host names', () => {
  it('builds links on a loopback Host only, and the stores answer no other Host', async () => {
    const port = inject('runtimePort');
    const merchant = { Authorization: `Basic ${Buffer.from('merchant-id:merchant-key').toString('base64')}`, 'X-Service-Auth-Organization-Id': 'org_200' };
    const selfLink = async (host: string) => (JSON.parse((await getWithHost(`${baseUrl()}/v3/organizations/org_200/paymethods`, host, merchant)).text) as { links: { self: string } }).links.self;
    expect(await selfLink('evil.example:8080')).toMatch(new RegExp(`^http://localhost:${port}/v3/`));
    expect(await selfLink(`127.0.0.1:${port}`)).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/v3/`));
    for (const endpoint of [s3Endpoint, environment.AWS_ENDPOINT_URL_DYNAMODB!, environment.AWS_ENDPOINT_URL_KMS!]) {
      expect((await getWithHost(`${endpoint}/`, 'evil.example')).status, endpoint).toBe(421);
    }
  });
});

describe('the files the runtime leaves while it runs', () => {
  it('are readable by their owner only: the runtime file (with the operator credential) and the events file', async () => {
    const port = inject('runtimePort');
    for (const file of [runtimeFilePath(repoRoot, port), eventsFilePath(repoRoot, port)]) expect(((await stat(file)).mode & 0o777).toString(8), file).toBe('600');
  });
});
