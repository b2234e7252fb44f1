import { NotFound } from '../errors.ts';
import type { Paymethod } from './model.ts';
import type { Page, PageRequest, PaymethodQuery, PaymethodRepository } from './ports.ts';

/** Where a path says a paymethod lives; a record anywhere else is "not found", never another tenant's data. */
export interface PaymethodAddress {
  organizationId: string;
  /** Absent on the organization-level routes, which reach locationless records too. */
  locationId?: string;
  paymethodToken: string;
}

export async function getPaymethod(address: PaymethodAddress, deps: { paymethods: PaymethodRepository }): Promise<Paymethod> {
  const found = await deps.paymethods.get(address.paymethodToken);
  const here =
    found !== undefined &&
    found.organization_id === address.organizationId &&
    (address.locationId === undefined || found.location_id === address.locationId);
  if (!here) throw new NotFound(`no paymethod ${address.paymethodToken}`);
  return found;
}

export async function listPaymethods(
  query: PaymethodQuery,
  page: PageRequest,
  deps: { paymethods: PaymethodRepository },
): Promise<Page<Paymethod>> {
  return deps.paymethods.list(query, page);
}
