import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import { isOrganizationId, newToken } from '../ids.ts';
import type { IdempotencyCompletion } from '../idempotency.ts';
import type { Caller, OrganizationStore } from '../tenancy.ts';
import { assertOrganizationAccess } from '../tenancy.ts';
import type { SealedSecret, Vault } from '../vault.ts';
import type { AccountIdentity, Fingerprinter } from './fingerprints.ts';
import type { CardDetails, EcheckDetails, OneTimeToken, Paymethod, VendorDetails } from './model.ts';
import type { BillingAgreements, NewPaymethod, OneTimeTokenRepository, PaymethodRepository } from './ports.ts';
import { lastFour, masked } from './rules.ts';
import type { CardInput, CreateForm, CreateInput, EcheckInput } from './validation.ts';
import { assertExpiryCurrentOrFuture, stripUndefined, validateCreate } from './validation.ts';

export interface CreatePaymethodDeps {
  paymethods: PaymethodRepository;
  oneTimeTokens: OneTimeTokenRepository;
  vault: Vault;
  fingerprinter: Fingerprinter;
  billingAgreements: BillingAgreements;
  organizations: OrganizationStore;
  clock: () => Date;
}

export interface CreatePaymethodCommand {
  form: CreateForm;
  caller: Caller;
  /** From the path; on the locationless route it comes from the body. */
  organizationId?: string;
  locationId?: string;
  /** From the path (rule 1: the path's customer wins). */
  customerToken?: string;
  body: Record<string, unknown>;
  /** The Idempotency-Key's answer, stored in the record's own transaction. */
  completion?: IdempotencyCompletion<Paymethod>;
}

interface Instrument {
  details: Pick<NewPaymethod, 'paymethod_type' | 'card' | 'echeck' | 'vendor'>;
  accountNumber?: string;
  oneTimeToken?: string;
}

/** What identifies the instrument's account for its fingerprint; vendors have none. */
export function accountIdentity(details: { card?: unknown; echeck?: { routing_number: string } }, accountNumber: string | undefined): AccountIdentity | undefined {
  if (accountNumber === undefined) return undefined;
  if (details.card) return { kind: 'card', accountNumber };
  if (details.echeck) return { kind: 'echeck', routingNumber: details.echeck.routing_number, accountNumber };
  return undefined;
}

/** The card or echeck with its fingerprint set. */
export async function withFingerprint<T extends { card?: CardDetails; echeck?: EcheckDetails }>(
  details: T,
  accountNumber: string | undefined,
  organizationId: string,
  fingerprinter: Fingerprinter,
): Promise<T> {
  const account = accountIdentity(details, accountNumber);
  if (!account) return details;
  const fingerprint = await fingerprinter.fingerprint(organizationId, account);
  if (details.card) return { ...details, card: { ...details.card, fingerprint } };
  return { ...details, echeck: { ...details.echeck!, fingerprint } };
}

/**
 * Creates a paymethod in any of the spec's forms. Nothing is written, and no
 * one-time token consumed, until every check has passed; the account number
 * is sealed (bound to organization and paymethod token) before the one write.
 */
export async function createPaymethod(command: CreatePaymethodCommand, deps: CreatePaymethodDeps): Promise<Paymethod> {
  const now = deps.clock();
  // Tokens are at most 26 characters: a longer path segment cannot name a customer.
  if (command.customerToken !== undefined && command.customerToken.length > 26) throw new NotFound(`no customer ${command.customerToken}`);
  // Locationless: the body's organization plays the path's part, so tenancy is decided before field rules.
  if (command.form === 'locationless' && isOrganizationId(command.body.organization_id)) {
    await assertOrganizationAccess(command.caller, command.body.organization_id, deps.organizations);
  }
  const input = validateCreate(command.body, command.form, now);
  const organizationId = command.organizationId ?? (input.organization_id as string);
  if (command.customerToken && input.customer_token && input.customer_token !== command.customerToken) {
    throw new InvalidRequest([{ field: 'customer_token', message: 'must match the customer token in the path' }]);
  }
  const customerToken = command.customerToken ?? input.customer_token;
  const paymethodToken = newToken('mth_');
  const instrument = await resolveInstrument(input, { organizationId, locationId: command.locationId, now }, deps);
  const details = await withFingerprint(instrument.details, instrument.accountNumber, organizationId, deps.fingerprinter);
  const secret: SealedSecret | undefined =
    instrument.accountNumber === undefined ? undefined : await deps.vault.seal(instrument.accountNumber, { organizationId, recordToken: paymethodToken });
  const record: NewPaymethod = stripUndefined({
    paymethod_token: paymethodToken,
    organization_id: organizationId,
    location_id: command.locationId,
    customer_token: customerToken,
    customer_id: input.customer_id,
    billing_address_token: input.billing_address_token,
    label: input.label,
    notes: input.notes,
    ...details,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  });
  return deps.paymethods.create(record, secret, {
    consumeOneTimeToken: instrument.oneTimeToken,
    now,
    completion: command.completion,
    failOnDuplicate: input.fail_on_duplicate === true,
  });
}

async function resolveInstrument(
  input: CreateInput,
  scope: { organizationId: string; locationId?: string; now: Date },
  deps: CreatePaymethodDeps,
): Promise<Instrument> {
  if (input.vendor) {
    const agreementId = await deps.billingAgreements.createAgreement(input.vendor.vendor_billing_agreement_token);
    const vendor: VendorDetails = { ...input.vendor, vendor_billing_agreement_id: agreementId };
    return { details: { paymethod_type: 'vendor', vendor } };
  }
  if (input.card) {
    const { card } = input;
    if (!card.one_time_token) return { details: { paymethod_type: 'card', card: cardDetails(card, card.account_number as string) }, accountNumber: card.account_number };
    const redeemed = await redeem(card.one_time_token, 'card', scope, deps);
    const merged = { ...redeemed.token.card, ...withoutSecrets(card) } as CardInput;
    assertExpiryCurrentOrFuture(merged.expire_month as number, merged.expire_year as number, scope.now);
    return { details: { paymethod_type: 'card', card: cardDetails(merged, redeemed.accountNumber) }, accountNumber: redeemed.accountNumber, oneTimeToken: card.one_time_token };
  }
  const echeck = input.echeck as EcheckInput;
  if (!echeck.one_time_token) return { details: { paymethod_type: 'echeck', echeck: echeckDetails(echeck, echeck.account_number as string) }, accountNumber: echeck.account_number };
  const redeemed = await redeem(echeck.one_time_token, 'echeck', scope, deps);
  const merged = { ...redeemed.token.echeck, ...echeck } as EcheckInput;
  return { details: { paymethod_type: 'echeck', echeck: echeckDetails(merged, redeemed.accountNumber) }, accountNumber: redeemed.accountNumber, oneTimeToken: echeck.one_time_token };
}

/**
 * A token is usable only under the organization and location it was minted
 * for and within its life; anything else looks unknown (400), so a token of
 * another tenant is indistinguishable from a made-up one. Used is 409.
 */
async function redeem(
  token: string,
  kind: 'card' | 'echeck',
  scope: { organizationId: string; locationId?: string; now: Date },
  deps: CreatePaymethodDeps,
): Promise<{ token: OneTimeToken; accountNumber: string }> {
  const field = `${kind}.one_time_token`;
  const found = await deps.oneTimeTokens.getWithSecret(token);
  const usable =
    found &&
    found.token.organization_id === scope.organizationId &&
    found.token.location_id === scope.locationId &&
    Date.parse(found.token.expires_at) > scope.now.getTime();
  if (!found || !usable) throw new InvalidRequest([{ field, message: 'is unknown or expired' }], 'INVALID_ONE_TIME_TOKEN');
  if (found.token.consumed_at) throw new Conflict('ONE_TIME_TOKEN_USED', 'the one-time token has already been used');
  if (found.token.paymethod_type !== kind) throw new InvalidRequest([{ field, message: `was minted for ${found.token.paymethod_type === 'card' ? 'a card' : 'an echeck'}` }]);
  const accountNumber = await deps.vault.open(found.secret, { organizationId: found.token.organization_id, recordToken: token });
  return { token: found.token, accountNumber };
}

function withoutSecrets(card: CardInput): CardInput {
  const { account_number: _number, ...rest } = card;
  return rest;
}

export function cardDetails(card: CardInput, accountNumber: string): CardDetails {
  return stripUndefined({
    card_type: card.card_type as CardDetails['card_type'],
    name_on_card: card.name_on_card as string,
    last_4_account_number: lastFour(accountNumber),
    masked_account_number: masked(accountNumber),
    expire_month: card.expire_month as number,
    expire_year: card.expire_year as number,
    procurement_card: card.procurement_card,
    suppress_account_updater: card.suppress_account_updater,
    one_time_token: card.one_time_token,
  });
}

export function echeckDetails(echeck: EcheckInput, accountNumber: string): EcheckDetails {
  return stripUndefined({
    account_holder: echeck.account_holder as string,
    last_4_account_number: lastFour(accountNumber),
    masked_account_number: masked(accountNumber),
    routing_number: echeck.routing_number as string,
    account_type: echeck.account_type,
    sec_code: echeck.sec_code as EcheckDetails['sec_code'],
    item_description: echeck.item_description,
    one_time_token: echeck.one_time_token,
  });
}
