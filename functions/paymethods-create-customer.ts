import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { paymethodCreateCommand, paymethodCreated } from '#shared/http/paymethods.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { createDeps } from '#shared/wiring/paymethods.ts';

/** POST .../locations/{location_id}/customers/{customer_token}/paymethods */
export const handler = idempotentApiHandler('paymethods-create-customer', async (request, { completion }) => {
  const answer = paymethodCreated(request);
  const paymethod = await createPaymethod({ ...paymethodCreateCommand('customer', request), completion: completion(answer) }, createDeps());
  recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
  return answer(paymethod);
});
