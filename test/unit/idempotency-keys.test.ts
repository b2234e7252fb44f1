import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Conflict, InvalidRequest, Throttled } from '#shared/domain/errors.ts';
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from '#shared/domain/idempotency.ts';
import { idempotent } from '#shared/http/idempotency.ts';
import type { ApiRequest } from '#shared/http/request.ts';

/** What the wrapper does with a key once its run refused the request: store the refusal, or give the key back. */
class RecordingStore implements IdempotencyStore {
  readonly calls: string[] = [];
  async claim(_claim: IdempotencyClaim) {
    this.calls.push('claim');
    return { kind: 'claimed' as const };
  }
  async complete(_claim: IdempotencyClaim, response: StoredResponse) {
    this.calls.push(`complete ${response.statusCode}`);
  }
  async release() {
    this.calls.push('release');
  }
  async abandon() {
    this.calls.push('abandon');
  }
}

const request = { requestId: 'r1', method: 'POST', pathParameters: { organization_id: 'org_1' }, query: {}, headers: { 'idempotency-key': 'k1' }, body: {}, rawBody: Buffer.from('{}'), caller: { organizationId: 'org_1' } } as unknown as ApiRequest;

async function keyAfter(refusal: Error): Promise<string[]> {
  const store = new RecordingStore();
  const handler = idempotent('test-route', async () => Promise.reject(refusal), () => store);
  await expect(handler(request, { signal: new AbortController().signal })).rejects.toBe(refusal);
  return store.calls;
}

describe('Idempotency-Key after a refusal', () => {
  it('stores a refusal that is the answer: a retry gets it again', async () => {
    expect(await keyAfter(new InvalidRequest([{ field: 'card', message: 'is required' }]))).toEqual(['claim', 'complete 400']);
    expect(await keyAfter(new Conflict('DUPLICATE_PAYMETHOD', 'the customer already has it'))).toEqual(['claim', 'complete 409']);
  });

  it('gives the key back after a refusal that asks for a retry, which would otherwise get the same refusal for 24 h', async () => {
    expect(await keyAfter(new Conflict('CONCURRENT_MODIFICATION', 'the customer was modified concurrently; retry'))).toEqual(['claim', 'release']);
    expect(await keyAfter(new Throttled('too many one-time tokens minted; retry later', 30))).toEqual(['claim', 'release']);
  });
});

describe('Idempotency-Key fingerprints', () => {
  /** The claim the wrapper makes for a request. */
  async function claimFor(rawBody: Buffer, contentType: string): Promise<IdempotencyClaim> {
    let seen: IdempotencyClaim | undefined;
    const store = new RecordingStore();
    store.claim = async (claim) => ((seen = claim), { kind: 'claimed' as const });
    const handler = idempotent('test-route', async () => ({ statusCode: 400, body: '{}' }), () => store);
    await handler({ ...request, rawBody, headers: { 'idempotency-key': 'k1', 'content-type': contentType } } as ApiRequest, { signal: new AbortController().signal });
    return seen!;
  }
  /** How keys stored before multipart boundaries were set aside were fingerprinted: route, path parameters, raw body. */
  const rawFingerprint = (body: Buffer) => createHash('sha256').update('test-route\n').update(JSON.stringify([['organization_id', 'org_1']])).update('\n').update(body).digest('base64url');
  const form = (boundary: string) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"resource":"application"}\r\n--${boundary}--\r\n`);

  it("keeps a JSON body's fingerprint as keys already stored carry it, and matches the part-wise form a version stored for a while", async () => {
    const body = Buffer.from('{"card":{"name_on_card":"Ann"}}');
    const partwise = createHash('sha256').update('test-route\n').update(JSON.stringify([['organization_id', 'org_1']])).update('\n').update(`${body.length}\n`).update(body).digest('base64url');
    expect(await claimFor(body, 'application/json')).toEqual(expect.objectContaining({ fingerprint: rawFingerprint(body), alsoMatches: [partwise] }));
  });

  it('gives a multipart body one fingerprint whatever its boundary, and also matches the raw one stored keys carry', async () => {
    const first = await claimFor(form('first-1234'), 'multipart/form-data; boundary=first-1234');
    const again = await claimFor(form('----WebKitFormBoundaryX'), 'multipart/form-data; boundary=----WebKitFormBoundaryX');
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(first.alsoMatches).toEqual([rawFingerprint(form('first-1234'))]);
    const other = await claimFor(Buffer.from(form('first-1234').toString().replace('application', 'dispute')), 'multipart/form-data; boundary=first-1234');
    expect(other.fingerprint).not.toBe(first.fingerprint);
  });
});
