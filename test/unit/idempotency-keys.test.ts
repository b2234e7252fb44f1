import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Conflict, InvalidRequest, Throttled } from '#shared/domain/errors.ts';
import type { IdempotencyClaim, IdempotencyStore, RequestHasher, StoredResponse } from '#shared/domain/idempotency.ts';
import { canonicalJson, idempotent } from '#shared/http/idempotency.ts';
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

/** The adapter's shape (length-delimited parts under a secret key), with a key only this test knows. */
class SecretKeyHasher implements RequestHasher {
  readonly key = randomBytes(32);
  async hash(parts: ReadonlyArray<string | Uint8Array>) {
    const hmac = createHmac('sha256', this.key);
    for (const part of parts) hmac.update(`${Buffer.byteLength(part)}:`).update(part);
    return hmac.digest('base64url');
  }
}
const hasher = new SecretKeyHasher();

const request = { requestId: 'r1', method: 'POST', pathParameters: { organization_id: 'org_1' }, query: {}, headers: { 'idempotency-key': 'k1' }, body: {}, rawBody: Buffer.from('{}'), caller: { organizationId: 'org_1' } } as unknown as ApiRequest;

async function keyAfter(refusal: Error): Promise<string[]> {
  const store = new RecordingStore();
  const handler = idempotent('test-route', async () => Promise.reject(refusal), () => ({ store, hasher }));
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
  async function claimFor(rawBody: Buffer, contentType: string, body?: Record<string, unknown>): Promise<IdempotencyClaim> {
    let seen: IdempotencyClaim | undefined;
    const store = new RecordingStore();
    store.claim = async (claim) => ((seen = claim), { kind: 'claimed' as const });
    const handler = idempotent('test-route', async () => ({ statusCode: 400, body: '{}' }), () => ({ store, hasher }));
    await handler({ ...request, body, rawBody, headers: { 'idempotency-key': 'k1', 'content-type': contentType } } as ApiRequest, { signal: new AbortController().signal });
    return seen!;
  }
  const json = (text: string) => claimFor(Buffer.from(text), 'application/json', JSON.parse(text) as Record<string, unknown>);
  /** A plain SHA-256 of route, path parameters and the raw body: what someone could test guessed bodies against offline. */
  const plain = (body: Buffer) => createHash('sha256').update('test-route\n').update(JSON.stringify([['organization_id', 'org_1']])).update('\n').update(body).digest('base64url');
  const form = (boundary: string) => Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n{"resource":"application"}\r\n--${boundary}--\r\n`);

  const CARD_BODY = '{"card":{"account_number":"4111111111111111","card_verification_value":"123","name_on_card":"Ann"}}';

  it('is a keyed hash: not a plain SHA-256 of the body, and not the same under another key', async () => {
    const claim = await json(CARD_BODY);
    const raw = Buffer.from(CARD_BODY);
    expect(claim.fingerprint).not.toBe(plain(raw));
    expect(claim.fingerprint).not.toBe(createHash('sha256').update(raw).digest('base64url'));
    expect(claim.fingerprint).not.toContain('4111');
    const otherKey = new SecretKeyHasher();
    const parts = ['test-route', JSON.stringify([['organization_id', 'org_1']]), canonicalJson(JSON.parse(CARD_BODY))];
    expect(claim.fingerprint).toBe(await hasher.hash(parts));
    expect(await otherKey.hash(parts)).not.toBe(claim.fingerprint);
  });

  it('leaves the CVV and null members out at any depth: another CVV, or none, is the same request; member order and spacing do not count', async () => {
    const first = (await json(CARD_BODY)).fingerprint;
    expect((await json(CARD_BODY.replace('"123"', '"9876"'))).fingerprint).toBe(first);
    expect((await json('{"card":{"account_number":"4111111111111111","name_on_card":"Ann"}}')).fingerprint).toBe(first);
    expect((await json('{ "card" : { "name_on_card":"Ann", "card_verification_value":"000", "account_number":"4111111111111111" } }')).fingerprint).toBe(first);
    expect(canonicalJson({ b: [{ card_verification_value: '1', z: 1, a: null }], a: 'x', card_verification_value: '2' })).toBe('{"a":"x","b":[{"z":1}]}');
    // A member whose value is null means the same as none: a retry that adds one is the same request.
    expect((await json('{"card":{"account_number":"4111111111111111","name_on_card":"Ann","label":null}}')).fingerprint).toBe(first);
    expect(canonicalJson([null, { a: null }])).toBe('[null,{}]');
    // Anything else that differs is another request.
    expect((await json(CARD_BODY.replace('4111111111111111', '4012888888881881'))).fingerprint).not.toBe(first);
    expect((await json(CARD_BODY.replace('Ann', 'Bob'))).fingerprint).not.toBe(first);
  });

  it('gives a multipart body one keyed fingerprint whatever its boundary', async () => {
    const first = await claimFor(form('first-1234'), 'multipart/form-data; boundary=first-1234');
    const again = await claimFor(form('----WebKitFormBoundaryX'), 'multipart/form-data; boundary=----WebKitFormBoundaryX');
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(first.fingerprint).not.toBe(plain(form('first-1234')));
    const other = await claimFor(Buffer.from(form('first-1234').toString().replace('application', 'dispute')), 'multipart/form-data; boundary=first-1234');
    expect(other.fingerprint).not.toBe(first.fingerprint);
  });
});
