import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import { apiHandler } from '#shared/http/api-handler.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { idempotent } from '#shared/http/idempotency.ts';
import { paymethodLinks, paymethodWriteView } from '#shared/http/paymethods.ts';
import { created } from '#shared/http/response.ts';
import { createDeps, idempotencyStore } from '#shared/wiring/paymethods.ts';

const NAME = 'paymethods-create-customer';

/** POST .../locations/{location_id}/customers/{customer_token}/paymethods */
export const handler = apiHandler(
  NAME,
  idempotent(
    NAME,
    async (request) => {
      const path = request.pathParameters;
      const paymethod = await createPaymethod(
        {
          form: 'customer',
          caller: request.caller!,
          organizationId: path.organization_id,
          locationId: path.location_id,
          customerToken: path.customer_token,
          body: request.body ?? {},
        },
        createDeps(),
      );
      recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
      return created(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
    },
    idempotencyStore,
  ),
);
