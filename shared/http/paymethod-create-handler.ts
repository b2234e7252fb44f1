import type { CreateForm, CreatePaymethodCommand } from '#shared/domain/paymethods/create.ts';
import { createPaymethod } from '#shared/domain/paymethods/create.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { recordBusinessMetric } from '#shared/observability/metrics.ts';
import { createDeps, idempotency } from '#shared/wiring/paymethods.ts';
import { apiHandler } from './api-handler.ts';
import { idempotent } from './idempotency.ts';
import { paymethodLinks, paymethodWriteView } from './paymethods.ts';
import type { ApiRequest } from './request.ts';
import { pathParams } from './request.ts';
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
        const answer = (paymethod: Paymethod) => created(paymethodWriteView(paymethod), paymethodLinks(request.baseUrl, paymethod));
        const paymethod = await createPaymethod({ ...commandOf(form, request), completion: completion(answer) }, createDeps());
        recordBusinessMetric('PaymethodsCreated', 1, { paymethod_type: paymethod.paymethod_type });
        return answer(paymethod);
      },
      idempotency,
    ),
  );
}

function commandOf(form: CreateForm, request: ApiRequest): CreatePaymethodCommand {
  const base = { caller: request.caller!, customerToken: request.pathParameters.customer_token, body: request.body ?? {} };
  if (form === 'locationless') return { ...base, form };
  const { organization_id: organizationId, location_id: locationId } = pathParams(request, 'organization_id', 'location_id');
  return { ...base, form, organizationId, locationId };
}
