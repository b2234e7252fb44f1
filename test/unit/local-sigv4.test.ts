import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { generateSigningCredentials } from '../../local/signing-credentials.ts';
import type { SigningCredential } from '../../local/signing-credentials.ts';
import { signatureVerifier } from '../../local/sigv4.ts';
import type { SignedRequest } from '../../local/sigv4.ts';

/** Requests as the SDK sends them, caught by a server that answers every one with an empty success. */
const caught: SignedRequest[] = [];
let endpoint = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    caught.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks) });
    const json = req.headers['x-amz-target'] !== undefined;
    res.writeHead(200, { 'Content-Type': json ? 'application/x-amz-json-1.1' : 'application/xml' }).end(json ? '{}' : '<ListBucketResult></ListBucketResult>');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const credentials = generateSigningCredentials(['documents-download']);
const verifier = signatureVerifier(credentials);

function clients(credential: SigningCredential) {
  const config = { region: 'us-east-1', endpoint, credentials: credential };
  return { s3: new S3Client({ ...config, forcePathStyle: true }), kms: new KMSClient(config) };
}

async function lastRequestOf(send: () => Promise<unknown>): Promise<SignedRequest> {
  caught.length = 0;
  await send().catch(() => undefined);
  const request = caught.at(-1);
  if (!request) throw new Error('nothing was sent');
  return request;
}

describe('SigV4 as the local endpoints check it', () => {
  it('knows each signer by its key: the operator, and a function by name', async () => {
    const { kms } = clients(credentials.operator);
    const request = await lastRequestOf(() => kms.send(new GenerateMacCommand({ KeyId: 'alias/x', Message: Buffer.from('m'), MacAlgorithm: 'HMAC_SHA_256' })));
    expect(await verifier.verifyRequest(request, 'kms')).toEqual({ ok: true, principal: { kind: 'operator' } });
    const { s3 } = clients(credentials.forFunction('documents-download'));
    const listed = await lastRequestOf(() => s3.send(new ListObjectsV2Command({ Bucket: 'b', Prefix: 'documents/org_1/' })));
    expect(await verifier.verifyRequest({ ...listed, body: undefined }, 's3')).toEqual({ ok: true, principal: { kind: 'function', name: 'documents-download' } });
  });

  it('accepts an S3 PUT streamed past it on its declared payload hash, and refuses a body that differs from it when read whole', async () => {
    const { s3 } = clients(credentials.operator);
    const request = await lastRequestOf(() => s3.send(new PutObjectCommand({ Bucket: 'b', Key: 'uploads/a b+c', Body: Buffer.from('bytes'), ContentType: 'text/plain' })));
    expect((await verifier.verifyRequest({ ...request, body: undefined }, 's3')).ok).toBe(true);
    expect(await verifier.verifyRequest({ ...request, body: Buffer.from('other') }, 's3')).toEqual({ ok: false, refusal: 'mismatch' });
  });

  it('refuses what is unsigned, altered, signed with an unknown key, for another service, or stale', async () => {
    const { kms } = clients(credentials.operator);
    const request = await lastRequestOf(() => kms.send(new GenerateMacCommand({ KeyId: 'alias/x', Message: Buffer.from('m'), MacAlgorithm: 'HMAC_SHA_256' })));
    const withoutAuthorization: IncomingHttpHeaders = { ...request.headers, authorization: undefined };
    delete withoutAuthorization.authorization;
    expect(await verifier.verifyRequest({ ...request, headers: withoutAuthorization }, 'kms')).toEqual({ ok: false, refusal: 'missing' });
    expect(await verifier.verifyRequest({ ...request, body: Buffer.from(String(request.body).replace('alias/x', 'alias/y')) }, 'kms')).toEqual({ ok: false, refusal: 'mismatch' });
    expect(await verifier.verifyRequest(request, 'secretsmanager')).toEqual({ ok: false, refusal: 'malformed' });
    const stranger = signatureVerifier(generateSigningCredentials([]));
    expect(await stranger.verifyRequest(request, 'kms')).toEqual({ ok: false, refusal: 'unknown-key' });
    const sixteenMinutesLater = signatureVerifier(credentials, () => new Date(Date.now() + 16 * 60 * 1000));
    expect(await sixteenMinutesLater.verifyRequest(request, 'kms')).toEqual({ ok: false, refusal: 'skewed' });
    const fourteenMinutesLater = signatureVerifier(credentials, () => new Date(Date.now() + 14 * 60 * 1000));
    expect((await fourteenMinutesLater.verifyRequest(request, 'kms')).ok).toBe(true);
  });

  it('accepts a presigned GET until it expires, and not once its query is changed', async () => {
    const { s3 } = clients(credentials.forFunction('documents-download'));
    const url = new URL(
      await getSignedUrl(s3, new GetObjectCommand({ Bucket: 'b', Key: 'documents/org_1/doc_1', ResponseContentDisposition: 'attachment; filename="a b.pdf"' }), { expiresIn: 300 }),
    );
    const request: SignedRequest = { method: 'GET', url: `${url.pathname}${url.search}`, headers: { host: url.host } };
    expect(await verifier.verifyRequest(request, 's3')).toEqual({ ok: true, principal: { kind: 'function', name: 'documents-download' } });
    expect(await verifier.verifyRequest({ ...request, url: request.url.replace('doc_1', 'doc_2') }, 's3')).toEqual({ ok: false, refusal: 'mismatch' });
    const sixMinutesLater = signatureVerifier(credentials, () => new Date(Date.now() + 6 * 60 * 1000));
    expect(await sixMinutesLater.verifyRequest(request, 's3')).toEqual({ ok: false, refusal: 'expired' });
  });

  it("checks a presigned POST's policy signature and its expiration", async () => {
    const { s3 } = clients(credentials.operator);
    const { fields } = await createPresignedPost(s3, { Bucket: 'b', Key: 'uploads/org_1/doc_1', Conditions: [['content-length-range', 1, 10]], Expires: 60 });
    const lowerCased = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name.toLowerCase(), value]));
    const expiration = new Date(Date.now() + 60_000);
    expect(await verifier.verifyPostPolicy(lowerCased, expiration)).toEqual({ ok: true, principal: { kind: 'operator' } });
    const otherPolicy = Buffer.from(JSON.stringify({ expiration: expiration.toISOString(), conditions: [] })).toString('base64');
    expect(await verifier.verifyPostPolicy({ ...lowerCased, policy: otherPolicy }, expiration)).toEqual({ ok: false, refusal: 'mismatch' });
    expect(await verifier.verifyPostPolicy(lowerCased, new Date(Date.now() - 1))).toEqual({ ok: false, refusal: 'expired' });
    expect(await verifier.verifyPostPolicy({ key: 'x' }, expiration)).toEqual({ ok: false, refusal: 'missing' });
  });
});
