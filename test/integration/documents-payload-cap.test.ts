import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_MAX_PAYLOAD_BYTES } from '#shared/platform/routes.ts';
import { BOUNDARY, multipartBody, uploadParts } from '../fixtures/documents.ts';
import type { Identity } from '../support/api.ts';
import { runtimeStores, upload } from '../support/documents.ts';
import type { RuntimeStores } from '../support/documents.ts';

/**
 * The largest file one request carries is set by Lambda's 6 MiB cap on the
 * whole proxy event, the base64-encoded body included:
 *   event = E + 4 * ceil((F + M) / 3) <= 6,291,456
 * with M the multipart overhead around the file and E the rest of the event
 * (headers twice, request context, authorizer context). E depends on the
 * request's headers, so the figure is found against the emulator (which
 * builds the event as API Gateway does), then checked with a real file.
 */
describe('documents: the single-request payload cap', () => {
  let stores: RuntimeStores;
  let org: Identity;
  const metadata = { resource: 'application', resource_id: 'app_1', description: 'largest single request' };

  beforeAll(async () => {
    stores = runtimeStores();
    org = await stores.freshOrganization();
  });
  afterAll(() => stores?.destroy());

  it('lets the largest file through and answers 413 one byte above', async () => {
    // Probes use NUL bytes named .txt: refused quickly with 400 once past the gateway, nothing stored.
    const probe = async (size: number) => (await upload(org, metadata, { name: 'largest.txt', contentType: 'text/plain', bytes: Buffer.alloc(size) })).status;
    let fits = 4_600_000;
    let tooBig = 4_800_000;
    expect(await probe(fits)).toBe(400);
    expect(await probe(tooBig)).toBe(413);
    while (tooBig - fits > 1) {
      const middle = Math.floor((fits + tooBig) / 2);
      if ((await probe(middle)) === 413) tooBig = middle;
      else fits = middle;
    }
    const largest = fits;

    const accepted = await upload(org, metadata, { name: 'largest.txt', contentType: 'text/plain', bytes: Buffer.alloc(largest, 0x61) });
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.body.size).toBe(largest);
    const refused = await upload(org, metadata, { name: 'largest.txt', contentType: 'text/plain', bytes: Buffer.alloc(largest + 1, 0x61) });
    expect(refused.status).toBe(413);
    expect((refused.body as { response: { response_desc: string } }).response.response_desc).toContain('POST /v3/organizations/org_<id>/documents/uploads');

    const overhead = multipartBody(uploadParts(metadata, { name: 'largest.txt', contentType: 'text/plain', bytes: Buffer.alloc(0) }), BOUNDARY).length;
    const base64Body = 4 * Math.ceil((largest + overhead) / 3);
    console.info(
      `largest single-request file: ${largest} bytes (multipart overhead ${overhead} bytes, base64 body ${base64Body} chars, ` +
        `rest of the event <= ${LAMBDA_MAX_PAYLOAD_BYTES - base64Body} bytes)`,
    );
    expect(base64Body).toBeLessThanOrEqual(LAMBDA_MAX_PAYLOAD_BYTES);
  });
});
