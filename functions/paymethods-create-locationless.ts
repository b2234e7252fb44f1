import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import { idempotentApiHandler } from '#shared/http/idempotency.ts';
import { paymethodCreateCommand, paymethodCreated } from '#shared/http/paymethods.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { createDeps } from '#shared/wiring/paymethods.ts';

/** POST /v3/customers/{customer_token}/paymethods (organization_id in the body) */
export const handler = idempotentApiHandler('paymethods-create-locationless', async (request, { completion }) => {
  const answer = paymethodCreated(request);
  const paymethod = await createPaymethod({ ...paymethodCreateCommand('locationless', request), completion: completion(answer) }, createDeps());
  recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
  return answer(paymethod);
});
