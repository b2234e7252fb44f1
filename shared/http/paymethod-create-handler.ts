import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { CreateForm } from '#shared/domain/paymethods/validation.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { createDeps, idempotencyStore } from '#shared/wiring/paymethods.ts';
import { apiHandler } from './api-handler.ts';
import { idempotent } from './idempotency.ts';
import { paymethodLinks, paymethodWriteView } from './paymethods.ts';
import { created } from './response.ts';

/**
 * The three create routes differ only in their path, and so in the form the
 * use case validates: customer path, clientless location path, locationless.
 */
export function paymethodCreateHandler(handlerName: string, form: CreateForm) {
  return apiHandler(
    handlerName,
    idempotent(
      handlerName,
      async (request, { completion }) => {
        const path = request.pathParameters;
        const answer = (paymethod: Paymethod) => created(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
        const paymethod = await createPaymethod(
          {
            form,
            caller: request.caller!,
            organizationId: path.organization_id,
            locationId: path.location_id,
            customerToken: path.customer_token,
            body: request.body ?? {},
            completion: completion(answer),
          },
          createDeps(),
        );
        recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
        return answer(paymethod);
      },
      idempotencyStore,
    ),
  );
}
