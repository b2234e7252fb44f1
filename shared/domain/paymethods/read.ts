import { NotFound } from '../errors.ts';
import type { OneTimeToken, Paymethod } from './model.ts';
import type { OneTimeTokenRepository, Page, PageRequest, PaymethodQuery, PaymethodReads } from './ports.ts';

/** Where a path says a paymethod lives; a record anywhere else is "not found", never another tenant's data. */
export interface PaymethodAddress {
  organizationId: string;
  /** Absent on the organization-level routes, which reach locationless records too. */
  locationId?: string;
  paymethodToken: string;
}

export async function getPaymethod(address: PaymethodAddress, deps: { paymethods: Pick<PaymethodReads, 'get'> }): Promise<Paymethod> {
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
  deps: { paymethods: Pick<PaymethodReads, 'list'> },
): Promise<Page<Paymethod>> {
  return deps.paymethods.list(query, page);
}

/** Where a path says a one-time token was minted. */
export interface OneTimeTokenAddress {
  organizationId: string;
  locationId: string;
  oneTimeToken: string;
}

/**
 * A token reads back only while a paymethod could still be created from it:
 * under the organization and location it was minted for, unused and unexpired.
 * Anything else is "not found", so reading never tells another tenant, or
 * anyone after the token's use, that it existed.
 */
export async function getOneTimeToken(
  address: OneTimeTokenAddress,
  deps: { oneTimeTokens: Pick<OneTimeTokenRepository, 'get'>; clock: () => Date },
): Promise<OneTimeToken> {
  const found = await deps.oneTimeTokens.get(address.oneTimeToken);
  const readable =
    found !== undefined &&
    found.organization_id === address.organizationId &&
    found.location_id === address.locationId &&
    found.consumed_at === undefined &&
    Date.parse(found.expires_at) > deps.clock().getTime();
  if (!readable) throw new NotFound(`no one-time token ${address.oneTimeToken}`);
  return found;
}
