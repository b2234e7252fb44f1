import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOUNDARY, multipartBody, png, uploadParts } from '../fixtures/documents.ts';
import { call, PARTNER } from '../support/api.ts';
import type { Identity } from '../support/api.ts';
import { documentsPath, runtimeStores } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

describe('documents: Idempotency-Key on both POST routes', () => {
  let stores: RuntimeStores;
  let merchant: Identity;

  beforeAll(async () => {
    stores = runtimeStores();
    merchant = await stores.freshOrganization(PARTNER.organizationId);
  });
  afterAll(() => stores?.destroy());

  const uploadWithKey = (key: string, description: string, boundary = BOUNDARY) =>
    call(documentsPath(merchant.organizationId), {
      method: 'POST',
      as: merchant,
      // A resource_id per key: uploads under other keys would otherwise repeat these bytes for one resource_id (a duplicate).
      rawBody: multipartBody(uploadParts({ resource: 'application', resource_id: `app_${key}`, description }, { name: 'r.png', contentType: 'image/png', bytes: png }), boundary),
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Idempotency-Key': key },
    });

  it('replays a repeated upload without storing a second document, and refuses the key with another body', async () => {
    const first = await uploadWithKey('upload-1', 'receipt');
    const again = await uploadWithKey('upload-1', 'receipt');
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.document_id).toBe(first.body.document_id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await stores.objectKeys(merchant.organizationId)).toHaveLength(1);

    const other = await uploadWithKey('upload-1', 'another receipt');
    expect(other.status).toBe(422);
    expect(other.body.response).toMatchObject({ response_code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await stores.objectKeys(merchant.organizationId)).toHaveLength(1);
  });

  it('opens one upload session for concurrent retries with the same key', async () => {
    const body = { resource: 'application', resource_id: 'app_2', description: 'big scan', file_name: 'scan.png' };
    const answers = await Promise.all(
      [1, 2].map(() => call(documentsPath(merchant.organizationId, 'uploads'), { method: 'POST', as: merchant, body, headers: { 'Idempotency-Key': 'session-1' } })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect([[201, 201], [201, 409]]).toContainEqual(statuses);
    const ids = new Set(answers.filter((answer) => answer.status === 201).map((answer) => answer.body.document_id));
    expect(ids.size).toBe(1);
  });

  it('replays an upload retried with a new multipart boundary, as fetch, browsers and curl -F send it, and still refuses another file', async () => {
    const before = (await stores.objectKeys(merchant.organizationId)).length;
    const first = await uploadWithKey('upload-boundary', 'receipt', 'first-boundary-1234');
    const again = await uploadWithKey('upload-boundary', 'receipt', '----WebKitFormBoundary7MA4YWxkTrZu0gW');
    expect(first.status, first.text).toBe(201);
    expect(again.status, again.text).toBe(201);
    expect(again.body.document_id).toBe(first.body.document_id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await uploadWithKey('upload-boundary', 'another receipt', 'third-boundary-5678');
    expect(other.status).toBe(422);
    expect(await stores.objectKeys(merchant.organizationId)).toHaveLength(before + 1);
  });
});
