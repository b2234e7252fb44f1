/**
 * In-memory stand-ins for the paymethod use cases' ports, for unit tests of
 * the use cases. They keep the contracts the ports document (a customer's
 * first paymethod is its default, a one-time token is consumed once, updates
 * check the version) so the use cases can be exercised without DynamoDB; the
 * DynamoDB adapters themselves are tested against DynamoDB Local.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { AccountIdentity, Fingerprinter } from '#shared/domain/paymethods/fingerprints.ts';
import { Conflict, InvalidRequest } from '#shared/domain/errors.ts';
import type { OneTimeToken, Paymethod } from '#shared/domain/paymethods/model.ts';
import type { BillingAgreements, NewPaymethod, OneTimeTokenRepository, Page, PageRequest, PaymethodCreates, PaymethodDeletes, PaymethodQuery, PaymethodReads, PaymethodUpdates } from '#shared/domain/paymethods/ports.ts';
import type { Organization, OrganizationStore } from '#shared/domain/tenancy.ts';
import type { SealedSecret, Vault, VaultBinding } from '#shared/domain/vault.ts';

/** "Seals" by binding the plaintext to its ids, so opening with another binding fails as KMS would. */
export class InMemoryVault implements Vault {
  readonly sealed: VaultBinding[] = [];

  async seal(plaintext: string, binding: VaultBinding): Promise<SealedSecret> {
    this.sealed.push(binding);
    const ciphertext = Buffer.from(JSON.stringify([binding.organizationId, binding.recordToken, plaintext]));
    return { v: 1, key_id: 'in-memory', encrypted_data_key: new Uint8Array(), iv: new Uint8Array(), ciphertext, tag: new Uint8Array() };
  }

  async open(sealed: SealedSecret, binding: VaultBinding): Promise<string> {
    const [organizationId, recordToken, plaintext] = JSON.parse(Buffer.from(sealed.ciphertext).toString()) as [string, string, string];
    if (organizationId !== binding.organizationId || recordToken !== binding.recordToken) throw new Error('binding mismatch');
    return plaintext;
  }

  /** The plaintext of a sealed value, for assertions. */
  static plaintextOf(sealed: SealedSecret | undefined): string | undefined {
    return sealed && (JSON.parse(Buffer.from(sealed.ciphertext).toString()) as string[])[2];
  }
}

export class InMemoryOneTimeTokens implements OneTimeTokenRepository {
  readonly tokens = new Map<string, { token: OneTimeToken; secret: SealedSecret }>();

  async create(token: OneTimeToken, secret: SealedSecret): Promise<void> {
    this.tokens.set(token.one_time_token, { token: structuredClone(token), secret });
  }

  async getWithSecret(token: string) {
    const found = this.tokens.get(token);
    return found && { token: structuredClone(found.token), secret: found.secret };
  }

  async get(token: string) {
    return (await this.getWithSecret(token))?.token;
  }

  /** Marks a token used, as the paymethod repository's create does in its transaction. */
  consume(token: string, now: Date): void {
    const found = this.tokens.get(token);
    if (!found || found.token.consumed_at) throw new Conflict('ONE_TIME_TOKEN_USED', 'the one-time token has already been used');
    found.token.consumed_at = now.toISOString();
  }
}

export class InMemoryPaymethods implements PaymethodReads, PaymethodCreates, PaymethodUpdates, PaymethodDeletes {
  readonly records = new Map<string, { paymethod: Paymethod; secret: SealedSecret | undefined }>();

  constructor(private readonly oneTimeTokens: InMemoryOneTimeTokens) {}

  async get(paymethodToken: string): Promise<Paymethod | undefined> {
    const found = this.records.get(paymethodToken);
    return found && structuredClone(found.paymethod);
  }

  async sealedNumber(paymethodToken: string): Promise<SealedSecret | undefined> {
    return this.records.get(paymethodToken)?.secret;
  }

  async create(record: NewPaymethod, secret: SealedSecret | undefined, options: { consumeOneTimeToken?: string; now: Date }): Promise<Paymethod> {
    if (options.consumeOneTimeToken) this.oneTimeTokens.consume(options.consumeOneTimeToken, options.now);
    const paymethod: Paymethod = { ...record, is_default: record.customer_token !== undefined && !this.defaultOf(record.organization_id, record.customer_token), version: 1 };
    this.records.set(paymethod.paymethod_token, { paymethod: structuredClone(paymethod), secret });
    return paymethod;
  }

  async update(current: Paymethod, next: Paymethod): Promise<Paymethod> {
    const stored = this.records.get(current.paymethod_token);
    if (!stored || stored.paymethod.version !== current.version) throw new Conflict('CONCURRENT_MODIFICATION', 'the paymethod was modified concurrently; retry');
    let updated: Paymethod = { ...next, version: current.version + 1 };
    if (next.customer_token !== current.customer_token) {
      this.leaveCustomer(current);
      updated = { ...updated, is_default: next.customer_token !== undefined && !this.defaultOf(next.organization_id, next.customer_token) };
    }
    this.records.set(current.paymethod_token, { paymethod: structuredClone(updated), secret: stored.secret });
    return updated;
  }

  async delete(current: Paymethod): Promise<void> {
    const stored = this.records.get(current.paymethod_token);
    if (!stored || stored.paymethod.version !== current.version) throw new Conflict('CONCURRENT_MODIFICATION', 'the paymethod was modified concurrently; retry');
    this.leaveCustomer(current);
    this.records.delete(current.paymethod_token);
  }

  async list(query: PaymethodQuery, page: PageRequest): Promise<Page<Paymethod>> {
    const matching = [...this.records.values()]
      .map(({ paymethod }) => paymethod)
      .filter((paymethod) => paymethod.organization_id === query.organizationId)
      .filter((paymethod) => query.locationId === undefined || paymethod.location_id === query.locationId)
      .filter((paymethod) => query.customerToken === undefined || paymethod.customer_token === query.customerToken)
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    const start = page.pageIndex * page.pageSize;
    return { items: structuredClone(matching.slice(start, start + page.pageSize)) };
  }

  secretOf(paymethodToken: string): SealedSecret | undefined {
    return this.records.get(paymethodToken)?.secret;
  }

  private customerRecords(organizationId: string, customerToken: string): Paymethod[] {
    return [...this.records.values()].map(({ paymethod }) => paymethod).filter((p) => p.organization_id === organizationId && p.customer_token === customerToken);
  }

  private defaultOf(organizationId: string, customerToken: string): Paymethod | undefined {
    return this.customerRecords(organizationId, customerToken).find((paymethod) => paymethod.is_default);
  }

  /** The customer's newest remaining paymethod becomes the default when the default leaves. */
  private leaveCustomer(current: Paymethod): void {
    if (!current.customer_token || !current.is_default) return;
    const others = this.customerRecords(current.organization_id, current.customer_token).filter((p) => p.paymethod_token !== current.paymethod_token);
    const newest = others.sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
    if (newest) {
      const stored = this.records.get(newest.paymethod_token)!;
      stored.paymethod = { ...stored.paymethod, is_default: true, version: stored.paymethod.version + 1 };
    }
  }
}

/** Approves tokens of the stand-in's form (`BA-` and 17 letters or digits), as the local PayPal stand-in does. */
export class InMemoryBillingAgreements implements BillingAgreements {
  readonly calls: string[] = [];

  async createAgreement(billingAgreementToken: string): Promise<string> {
    this.calls.push(billingAgreementToken);
    if (!/^BA-[A-Za-z0-9]{17}$/.test(billingAgreementToken)) {
      throw new InvalidRequest([{ field: 'vendor.vendor_billing_agreement_token', message: 'was refused by PayPal' }]);
    }
    return `B-${billingAgreementToken.slice(3)}`;
  }
}

export class InMemoryOrganizations implements OrganizationStore {
  readonly organizations = new Map<string, Organization>();

  async get(organizationId: string): Promise<Organization | undefined> {
    return this.organizations.get(organizationId);
  }

  async create(organization: Organization): Promise<void> {
    if (this.organizations.has(organization.organization_id)) throw new Conflict('ORGANIZATION_EXISTS', 'the organization exists already');
    this.organizations.set(organization.organization_id, organization);
  }
}

/** Every port of the paymethod use cases, wired together, with a clock the test controls. */
/** Fingerprints shaped like the KMS adapter's: HMAC-SHA-256 under a per-organization key derived from a test key. */
export class InMemoryFingerprinter implements Fingerprinter {
  private readonly key = randomBytes(32);

  async fingerprint(organizationId: string, account: AccountIdentity): Promise<string> {
    const organizationKey = createHmac('sha256', this.key).update(organizationId).digest();
    const message = account.kind === 'card' ? `card|${account.accountNumber}` : `echeck|${account.routingNumber}|${account.accountNumber}`;
    return `fp_${createHmac('sha256', organizationKey).update(message).digest('base64url')}`;
  }
}

export function inMemoryPaymethodDeps(clock: () => Date) {
  const oneTimeTokens = new InMemoryOneTimeTokens();
  // One fake serves every protocol, as one table does.
  const paymethods = new InMemoryPaymethods(oneTimeTokens);
  return {
    paymethods,
    creates: paymethods,
    updates: paymethods,
    deletes: paymethods,
    oneTimeTokens,
    vault: new InMemoryVault(),
    fingerprinter: new InMemoryFingerprinter(),
    billingAgreements: new InMemoryBillingAgreements(),
    organizations: new InMemoryOrganizations(),
    clock,
  };
}
