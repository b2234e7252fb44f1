import { beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '#local/ports.ts';
import { MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { lambdaContext, proxyEvent } from '../support/lambda-event.ts';
import { PAYPAL, unique } from '../support/paymethods.ts';

/** In-process, with PayPal pointed at a port nothing listens on. */
describe('PayPal unreachable', () => {
  beforeAll(async () => {
    useRuntimeEnvironment();
    process.env.PAYPAL_API_URL = `http://127.0.0.1:${await freePort()}`; // just released: connection refused
  });

  it('answers 503 with Retry-After', async () => {
    const { handler } = await import('#functions/paymethods-create-location.ts');
    const loc = unique('loc_');
    const result = await handler(
      proxyEvent({
        method: 'POST',
        resource: '/v3/organizations/{organization_id}/locations/{location_id}/paymethods',
        path: `/v3/organizations/${MERCHANT.organizationId}/locations/${loc}/paymethods`,
        pathParameters: { organization_id: MERCHANT.organizationId, location_id: loc },
        body: { vendor: PAYPAL },
        organizationId: MERCHANT.organizationId,
      }),
      lambdaContext('paymethods-create-location') as Parameters<typeof handler>[1],
    );
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['Retry-After']).toBe('1');
  });
});
