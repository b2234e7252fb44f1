import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import { isOrganizationId, newToken } from '../ids.ts';
import type { IdempotencyCompletion } from '../idempotency.ts';
import { stripUndefined } from '../objects.ts';
import type { Caller, OrganizationStore } from '../tenancy.ts';
import { assertOrganizationAccess } from '../tenancy.ts';
import type { SealedSecret, Vault } from '../vault.ts';
import type { AccountIdentity, Fingerprinter } from './fingerprints.ts';
import type { CardDetails, EcheckDetails, OneTimeToken, Paymethod } from './model.ts';
import type { BillingAgreements, NewPaymethod, OneTimeTokenRepository, PaymethodCreates } from './ports.ts';
import { cardBrandMismatch, lastFour, masked } from './rules.ts';
import type { NewCard, NewEcheck, PaymethodCreate } from './validation.ts';
import { assertExpiryCurrentOrFuture, createBodySchema, locationlessCreateBodySchema, parseBody } from './validation.ts';

export interface CreatePaymethodDeps {
  creates: PaymethodCreates;
  oneTimeTokens: OneTimeTokenRepository;
  vault: Vault;
  fingerprinter: Fingerprinter;
  billingAgreements: BillingAgreements;
  organizations: OrganizationStore;
  clock: () => Date;
}

interface CommandBase {
  caller: Caller;
  /** From the path (rule 1: the path's customer wins). */
  customerToken?: string;
  body: Record<string, unknown>;
  /** The Idempotency-Key's answer, stored in the record's own transaction. */
  completion?: IdempotencyCompletion<Paymethod>;
}

/**
 * Which create route is asking. The customer and location routes name
 * organization and location in the path and share one body; the locationless
 * route takes the organization from the body.
 */
export type CreateForm = CreatePaymethodCommand['form'];

export type CreatePaymethodCommand =
  | (CommandBase & { form: 'customer' | 'location'; organizationId: string; locationId: string })
  | (CommandBase & { form: 'locationless' });

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

/** The card or echeck with its fingerprint set (computed from the number, never taken from a token or body). */
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

interface Scope {
  organizationId: string;
  locationId?: string;
  now: Date;
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
  const { input, scope } = parseCommand(command, now);
  if (command.customerToken && input.customer_token && input.customer_token !== command.customerToken) {
    throw new InvalidRequest([{ field: 'customer_token', message: 'must match the customer token in the path' }]);
  }
  const paymethodToken = newToken('mth_');
  const instrument = await resolveInstrument(input, scope, deps);
  const details = await withFingerprint(instrument.details, instrument.accountNumber, scope.organizationId, deps.fingerprinter);
  const secret: SealedSecret | undefined =
    instrument.accountNumber === undefined ? undefined : await deps.vault.seal(instrument.accountNumber, { organizationId: scope.organizationId, recordToken: paymethodToken });
  const record: NewPaymethod = stripUndefined({
    paymethod_token: paymethodToken,
    organization_id: scope.organizationId,
    location_id: scope.locationId,
    customer_token: command.customerToken ?? input.customer_token,
    customer_id: input.customer_id,
    billing_address_token: input.billing_address_token,
    label: input.label,
    notes: input.notes,
    ...details,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  });
  return deps.creates.create(record, secret, {
    consumeOneTimeToken: instrument.oneTimeToken,
    now,
    completion: command.completion,
    failOnDuplicate: input.fail_on_duplicate === true,
  });
}

function parseCommand(command: CreatePaymethodCommand, now: Date): { input: PaymethodCreate; scope: Scope } {
  if (command.form !== 'locationless') {
    return { input: parseBody(createBodySchema, command.body, now), scope: { organizationId: command.organizationId, locationId: command.locationId, now } };
  }
  const input = parseBody(locationlessCreateBodySchema, command.body, now);
  return { input, scope: { organizationId: input.organization_id, now } };
}

async function resolveInstrument(input: PaymethodCreate, scope: Scope, deps: CreatePaymethodDeps): Promise<Instrument> {
  switch (input.instrument) {
    case 'vendor': {
      const agreementId = await deps.billingAgreements.createAgreement(input.vendor.vendor_billing_agreement_token);
      return { details: { paymethod_type: 'vendor', vendor: { ...input.vendor, vendor_billing_agreement_id: agreementId } } };
    }
    case 'card':
      return { details: { paymethod_type: 'card', card: cardDetails(input.card) }, accountNumber: input.card.account_number };
    case 'echeck':
      return { details: { paymethod_type: 'echeck', echeck: echeckDetails(input.echeck) }, accountNumber: input.echeck.account_number };
    case 'card_token': {
      const redeemed = await redeem(input.one_time_token, 'card.one_time_token', scope, deps);
      if (!redeemed.token.card) throw new InvalidRequest([{ field: 'card.one_time_token', message: 'was minted for an echeck' }]);
      // Members sent beside the token override the token's; a card_type still has to be the number's.
      const card: CardDetails = { ...redeemed.token.card, ...input.card, one_time_token: input.one_time_token };
      const mismatch = input.card.card_type === undefined ? undefined : cardBrandMismatch(card.card_type, redeemed.accountNumber);
      if (mismatch) throw new InvalidRequest([{ field: 'card.card_type', message: mismatch }]);
      assertExpiryCurrentOrFuture(card.expire_month, card.expire_year, scope.now);
      return { details: { paymethod_type: 'card', card }, accountNumber: redeemed.accountNumber, oneTimeToken: input.one_time_token };
    }
    case 'echeck_token': {
      const redeemed = await redeem(input.one_time_token, 'echeck.one_time_token', scope, deps);
      if (!redeemed.token.echeck) throw new InvalidRequest([{ field: 'echeck.one_time_token', message: 'was minted for a card' }]);
      const echeck: EcheckDetails = { ...redeemed.token.echeck, ...input.echeck, one_time_token: input.one_time_token };
      return { details: { paymethod_type: 'echeck', echeck }, accountNumber: redeemed.accountNumber, oneTimeToken: input.one_time_token };
    }
  }
}

/**
 * A token is usable only under the organization and location it was minted
 * for and within its life; anything else looks unknown (400), so a token of
 * another tenant is indistinguishable from a made-up one. Used is 409; the
 * caller checks that it was minted for the same kind of instrument.
 */
async function redeem(token: string, field: string, scope: Scope, deps: CreatePaymethodDeps): Promise<{ token: OneTimeToken; accountNumber: string }> {
  const found = await deps.oneTimeTokens.getWithSecret(token);
  const usable =
    found &&
    found.token.organization_id === scope.organizationId &&
    found.token.location_id === scope.locationId &&
    Date.parse(found.token.expires_at) > scope.now.getTime();
  if (!found || !usable) throw new InvalidRequest([{ field, message: 'is unknown or expired' }], 'INVALID_ONE_TIME_TOKEN');
  if (found.token.consumed_at) throw new Conflict('ONE_TIME_TOKEN_USED', 'the one-time token has already been used');
  const accountNumber = await deps.vault.open(found.secret, { organizationId: found.token.organization_id, recordToken: token });
  return { token: found.token, accountNumber };
}

/** What is kept of a card: every parsed member except the number, which is sealed; its last four and mask instead. */
export function cardDetails({ account_number: accountNumber, ...card }: NewCard): CardDetails {
  return { ...card, last_4_account_number: lastFour(accountNumber), masked_account_number: masked(accountNumber) };
}

export function echeckDetails({ account_number: accountNumber, ...echeck }: NewEcheck): EcheckDetails {
  return { ...echeck, last_4_account_number: lastFour(accountNumber), masked_account_number: masked(accountNumber) };
}
