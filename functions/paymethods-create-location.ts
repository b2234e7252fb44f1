import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { paymethodCreateCommand, paymethodCreated } from '#shared/http/paymethods.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { createDeps } from '#shared/wiring/paymethods.ts';

/** POST .../locations/{location_id}/paymethods: clientless, or attached to the body's customer_token */
export const handler = idempotentApiHandler('paymethods-create-location', async (request, { completion }) => {
  const answer = paymethodCreated(request);
  const paymethod = await createPaymethod({ ...paymethodCreateCommand('location', request), completion: completion(answer) }, createDeps());
  recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
  return answer(paymethod);
});
