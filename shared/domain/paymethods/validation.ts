import { stripUndefined } from '../objects.ts';
import { z } from 'zod';
import { InvalidRequest } from '../errors.ts';
import { IssueList, issuesFromZod } from '../validation.ts';
import type { AccountType, CardType, SecCode } from './model.ts';
import {
  ACCOUNT_TYPES,
  CARD_TYPES,
  SEC_CODES,
  codePointLength,
  isDigits,
  isExpiryCurrentOrFuture,
  isValidRoutingNumber,
  passesLuhn,
} from './rules.ts';

/**
 * Request validation for paymethods and one-time tokens. zod checks each
 * member's type and format (all issues, unknown members named); the form rules
 * that depend on the route or on several members (required members, exactly
 * one sub-object, expiry) run afterwards on the same body, so one answer lists
 * every failing field.
 *
 * The schemas are also the OpenAPI document's request bodies (shared/http/openapi.ts).
 * Checks written as refinements are invisible to `z.toJSONSchema`, so each
 * builder below states the same rule as JSON Schema metadata (`.meta`) beside
 * the code that enforces it; the form rules are summarized in the schemas'
 * descriptions.
 */

const STRING = { error: 'must be a string' } as const;

/** JSON Schema's minLength/maxLength count code points too. */
function text(max: number, min = 1) {
  return z
    .string(STRING)
    .superRefine((value, ctx) => {
      const length = codePointLength(value);
      if (length < min) ctx.addIssue({ code: 'custom', message: min === 1 ? 'must not be empty' : `must be at least ${min} characters` });
      else if (length > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters` });
    })
    .meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max });
}

/** `extra` is a further check; `extraRule` says what it checks, for the schema's description. */
function digits(min: number, max: number, extra?: (value: string) => string | undefined, extraRule?: string) {
  return z
    .string(STRING)
    .superRefine((value, ctx) => {
      const message = !isDigits(value)
        ? 'must contain digits only'
        : value.length < min || value.length > max
          ? min === max
            ? `must be ${min} digits`
            : `must be ${min} to ${max} digits`
          : extra?.(value);
      if (message) ctx.addIssue({ code: 'custom', message });
    })
    .meta({
      pattern: min === max ? `^[0-9]{${min}}$` : `^[0-9]{${min},${max}}$`,
      ...(extraRule ? { description: extraRule } : {}),
    });
}

/** Tokens carry their prefix and are at most 26 characters in all. */
function token(prefix: string) {
  return z
    .string(STRING)
    .superRefine((value, ctx) => {
      if (!value.startsWith(prefix) || !/^[A-Za-z0-9_-]+$/.test(value.slice(prefix.length)) || value.length > 26) {
        ctx.addIssue({ code: 'custom', message: `must be ${prefix} followed by letters or digits, at most 26 characters` });
      }
    })
    .meta({ pattern: `^${prefix}[A-Za-z0-9_-]+$`, maxLength: 26 });
}

/** Matched in any case; the schema states that as a pattern of per-letter classes (JSON Schema regexes have no flags). */
function oneOf(values: readonly string[], normalize: (value: string) => string) {
  return z
    .string(STRING)
    .superRefine((value, ctx) => {
      if (!values.includes(normalize(value))) ctx.addIssue({ code: 'custom', message: `must be one of ${values.join(', ')}` });
    })
    .meta({ description: `One of ${values.join(', ')}, in any case.`, pattern: anyCasePattern(values), examples: [values[0]] });
}

function anyCasePattern(values: readonly string[]): string {
  const anyCase = (value: string) =>
    [...value].map((char) => (char.toLowerCase() === char.toUpperCase() ? char : `[${char.toLowerCase()}${char.toUpperCase()}]`)).join('');
  return `^(${values.map(anyCase).join('|')})$`;
}

/** The spec lets expiry members be strings or integers; both become integers. */
function expiryPart(kind: 'month' | 'year') {
  const meta =
    kind === 'month'
      ? { description: 'Month 1 to 12: an integer, or a string of one or two digits.', examples: [12, '07'] }
      : { description: 'Year from 2000: an integer, or a string of four digits (or two, meaning 20yy).', examples: [2031, '2031'] };
  return z.union([z.string(), z.number()], { error: 'must be a string or an integer' }).meta(meta).superRefine((value, ctx) => {
    const ok =
      kind === 'month'
        ? typeof value === 'number'
          ? Number.isInteger(value) && value >= 1 && value <= 12
          : /^[0-9]{1,2}$/.test(value) && Number(value) >= 1 && Number(value) <= 12
        : typeof value === 'number'
          ? Number.isInteger(value) && value >= 2000 && value <= 9999
          : /^([0-9]{2}|[0-9]{4})$/.test(value) && toYear(value) >= 2000;
    if (!ok) ctx.addIssue({ code: 'custom', message: kind === 'month' ? 'must be a month from 1 to 12' : 'must be a four-digit year' });
  });
}

const toYear = (value: string | number): number => (typeof value === 'string' && value.length === 2 ? 2000 + Number(value) : Number(value));

/** `true`/`false` or the strings "true"/"false". */
const booleanish = z
  .union([z.boolean(), z.string()], { error: 'must be true or false' })
  .superRefine((value, ctx) => {
    if (typeof value === 'string' && !['true', 'false'].includes(value.toLowerCase())) ctx.addIssue({ code: 'custom', message: 'must be true or false' });
  })
  .meta({ description: 'true or false, or the strings "true" or "false" (any case). Returned as a boolean.' });

/** A member that is named (so it is not "unrecognized") but always refused: `not: {}` in JSON Schema. */
function refused(message: string) {
  return z
    .unknown()
    .superRefine((_value, ctx) => ctx.addIssue({ code: 'custom', message }))
    .meta({ not: {}, description: `Refused: ${message}.` });
}

const notUpdatable = refused('cannot be changed by an update');

const cardMembers = {
  card_type: oneOf(CARD_TYPES, (value) => value.toLowerCase()).optional(),
  name_on_card: text(50).optional(),
  account_number: digits(12, 16, (value) => (passesLuhn(value) ? undefined : 'is not a valid card number'), 'Must pass the Luhn check. Never returned.').optional(),
  expire_month: expiryPart('month').optional(),
  expire_year: expiryPart('year').optional(),
  card_verification_value: digits(3, 4, undefined, 'Validated, never stored or returned.').optional(),
  procurement_card: booleanish.optional(),
  customer_accounting_code: text(17).optional(),
  suppress_account_updater: booleanish.optional(),
  one_time_token: token('ott_').optional(),
};

const echeckMembers = {
  account_holder: text(50).optional(),
  account_number: digits(4, 17, undefined, 'Never returned.').optional(),
  routing_number: digits(
    9,
    9,
    (value) => (isValidRoutingNumber(value) ? undefined : 'is not a valid U.S. (ABA) or Canadian (0AAABBBBB) routing number'),
    'A U.S. routing number passing the ABA checksum, or a Canadian one written 0AAABBBBB.',
  ).optional(),
  account_type: oneOf(ACCOUNT_TYPES, (value) => value.toLowerCase()).optional(),
  sec_code: oneOf(SEC_CODES, (value) => value.toUpperCase()).optional(),
  item_description: text(255, 0).optional(),
  one_time_token: token('ott_').optional(),
};

const vendorMembers = {
  vendor_type: oneOf(['paypal'], (value) => value.toLowerCase()).optional(),
  vendor_billing_agreement_token: text(64).optional(),
};

const OBJECT = { error: 'must be an object' } as const;

/** The create body of the three create routes (after `vendors` became `vendor`; see withVendorAlias). */
export const createSchema = z.strictObject({
  organization_id: z.string(STRING).optional(),
  customer_token: token('cst_').optional(),
  customer_id: text(15).optional(),
  billing_address_token: token('add_').optional(),
  label: text(50).optional(),
  notes: text(50, 0).optional(),
  card: z.strictObject(cardMembers, OBJECT).optional(),
  echeck: z.strictObject(echeckMembers, OBJECT).optional(),
  vendor: z.strictObject(vendorMembers, OBJECT).optional(),
  fail_on_duplicate: booleanish.optional().meta({
    description:
      'When true, refuse (409 DUPLICATE_PAYMETHOD) a card or echeck whose fingerprint the customer already has '
      + '(without a customer: the location\'s paymethods without a customer). true or false, or the strings "true" or "false".',
  }),
}).meta({
  description:
    'Exactly one of card, echeck or vendor. A card needs card_type, name_on_card, account_number, expire_month and expire_year, '
    + 'unless it carries a one_time_token (then account_number and card_type must not be sent); an echeck needs account_holder, '
    + 'account_number, routing_number and sec_code, unless it carries a one_time_token (then account_number and routing_number must '
    + 'not be sent); a vendor needs vendor_type and vendor_billing_agreement_token. The expiry must not be before the current UTC month. '
    + 'Members whose value is null are treated as absent; unknown members are refused.',
});

export const updateSchema = z.strictObject({
  customer_token: token('cst_').optional(),
  customer_id: text(15).optional(),
  billing_address_token: token('add_').optional(),
  label: text(50).optional(),
  notes: text(50, 0).optional(),
  card: z
    .strictObject(
      {
        name_on_card: cardMembers.name_on_card,
        expire_month: cardMembers.expire_month,
        expire_year: cardMembers.expire_year,
        card_verification_value: cardMembers.card_verification_value,
        procurement_card: cardMembers.procurement_card,
        customer_accounting_code: cardMembers.customer_accounting_code,
        suppress_account_updater: cardMembers.suppress_account_updater,
        account_number: notUpdatable.optional(),
        card_type: notUpdatable.optional(),
        one_time_token: notUpdatable.optional(),
      },
      OBJECT,
    )
    .optional(),
  echeck: z
    .strictObject(
      {
        account_holder: echeckMembers.account_holder,
        routing_number: echeckMembers.routing_number,
        account_type: echeckMembers.account_type,
        sec_code: echeckMembers.sec_code,
        item_description: echeckMembers.item_description,
        account_number: notUpdatable.optional(),
        one_time_token: notUpdatable.optional(),
      },
      OBJECT,
    )
    .optional(),
  vendor: z.strictObject({ vendor_billing_agreement_token: notUpdatable.optional(), vendor_type: notUpdatable.optional() }, OBJECT).optional(),
}).meta({
  minProperties: 1,
  description:
    'Partial update: only the members sent change. An echeck update must carry account_holder and routing_number. '
    + 'Account numbers cannot be changed. Members whose value is null are treated as absent; unknown members are refused.',
});

/** A one-time token carries a full card or echeck, exactly as a create would, without a one_time_token of its own. */
export const oneTimeTokenSchema = z.strictObject({
  card: z.strictObject({ ...cardMembers, one_time_token: refused('is not accepted when minting a one-time token').optional() }, OBJECT).optional(),
  echeck: z.strictObject({ ...echeckMembers, one_time_token: refused('is not accepted when minting a one-time token').optional() }, OBJECT).optional(),
}).meta({
  description:
    'Exactly one of card or echeck, complete as on a paymethod create (card: card_type, name_on_card, account_number, expire_month, '
    + 'expire_year; echeck: account_holder, account_number, routing_number, sec_code).',
});

export interface CardInput {
  card_type?: CardType;
  name_on_card?: string;
  account_number?: string;
  expire_month?: number;
  expire_year?: number;
  procurement_card?: boolean;
  suppress_account_updater?: boolean;
  one_time_token?: string;
  // card_verification_value and customer_accounting_code are validated and dropped here: never stored.
}

export interface EcheckInput {
  account_holder?: string;
  account_number?: string;
  routing_number?: string;
  account_type?: AccountType;
  sec_code?: SecCode;
  item_description?: string;
  one_time_token?: string;
}

export interface VendorInput {
  vendor_type: 'paypal';
  vendor_billing_agreement_token: string;
}

export interface CreateInput {
  organization_id?: string;
  customer_token?: string;
  customer_id?: string;
  billing_address_token?: string;
  label?: string;
  notes?: string;
  card?: CardInput;
  echeck?: EcheckInput;
  vendor?: VendorInput;
  /** Refuse a card or echeck the duplicate scope already holds (see ports.ts). */
  fail_on_duplicate?: boolean;
}

export type UpdateInput = Omit<CreateInput, 'organization_id' | 'vendor' | 'fail_on_duplicate'>;

/** Which create route is validating: the rules differ slightly between them. */
export type CreateForm = 'customer' | 'location' | 'locationless';

type Body = Record<string, unknown>;

/**
 * The body a create route accepts, as the API documents it: createSchema with
 * the form's organization_id rule (required on the locationless route, refused
 * elsewhere) and the `vendors` alias. Validation itself runs validateCreate.
 */
export function createBodySchema(form: CreateForm) {
  const { organization_id: _organizationId, ...members } = createSchema.shape;
  const vendors = createSchema.shape.vendor.meta({ description: 'Accepted alias of vendor (the spelling of an example in the spec); not together with vendor.' });
  const schema =
    form === 'locationless'
      ? z.strictObject({
          organization_id: z.string().meta({ pattern: '^org_[A-Za-z0-9_-]+$', description: 'The organization the paymethod belongs to (403 unless the caller may act on it).' }),
          ...members,
          vendors,
        })
      : z.strictObject({ ...members, vendors });
  return schema.meta({ ...z.globalRegistry.get(createSchema) });
}

/** `vendors` is the spec's example spelling of `vendor`; both are accepted, not together. */
export function withVendorAlias(body: Body, issues: IssueList): Body {
  if (!('vendors' in body)) return body;
  if ('vendor' in body) {
    issues.add('vendors', 'must not be sent together with vendor');
    const { vendors: _ignored, ...rest } = body;
    return rest;
  }
  const { vendors, ...rest } = body;
  return { ...rest, vendor: vendors };
}

export function validateCreate(rawBody: Body, form: CreateForm, now: Date): CreateInput {
  const issues = new IssueList();
  const body = withVendorAlias(rawBody, issues);
  const parsed = createSchema.safeParse(body);
  if (!parsed.success) issues.addAll(issuesFromZod(parsed.error));

  if (form === 'locationless' && body.organization_id === undefined) issues.add('organization_id', 'is required');
  if (form !== 'locationless' && body.organization_id !== undefined && !issues.has('organization_id')) {
    issues.add('organization_id', 'is not a recognized member');
  }
  requireExactlyOneInstrument(body, issues);
  if (isObject(body.card)) checkCardForm(body.card, form, issues, now);
  if (isObject(body.echeck)) checkEcheckForm(body.echeck, form, issues);
  if (isObject(body.vendor)) {
    for (const member of ['vendor_type', 'vendor_billing_agreement_token']) if (body.vendor[member] === undefined) issues.add(`vendor.${member}`, 'is required');
  }
  if (!issues.empty || !parsed.success) throw new InvalidRequest(issues.items);
  return normalizeCreate(parsed.data);
}

/** A one-time token request carries a full card or echeck, exactly as a create would. */
export function validateOneTimeToken(body: Body, now: Date): Pick<CreateInput, 'card' | 'echeck'> {
  const issues = new IssueList();
  // The schema refuses a one_time_token inside card or echeck.
  const parsed = oneTimeTokenSchema.safeParse(body);
  if (!parsed.success) issues.addAll(issuesFromZod(parsed.error));
  const count = ['card', 'echeck'].filter((member) => body[member] !== undefined).length;
  if (count !== 1) issues.add('', count === 0 ? 'exactly one of card or echeck is required' : 'only one of card or echeck may be sent');
  if (isObject(body.card)) checkCardForm({ ...body.card, one_time_token: undefined }, 'location', issues, now);
  if (isObject(body.echeck)) checkEcheckForm({ ...body.echeck, one_time_token: undefined }, 'location', issues);
  if (!issues.empty || !parsed.success) throw new InvalidRequest(issues.items);
  const normalized = normalizeCreate(parsed.data as z.infer<typeof createSchema>);
  return { card: normalized.card, echeck: normalized.echeck };
}

export function validateUpdate(body: Body, now: Date): UpdateInput {
  const issues = new IssueList();
  const parsed = updateSchema.safeParse(body);
  if (!parsed.success) issues.addAll(issuesFromZod(parsed.error));
  if (Object.keys(body).length === 0) issues.add('', 'at least one member to update is required');
  if (isObject(body.echeck)) {
    for (const member of ['account_holder', 'routing_number']) if (body.echeck[member] === undefined) issues.add(`echeck.${member}`, 'is required');
  }
  if (isObject(body.card)) checkExpiry(body.card, issues, now);
  if (!issues.empty || !parsed.success) throw new InvalidRequest(issues.items);
  const { card, echeck, ...rest } = normalizeCreate({ ...parsed.data, vendor: undefined } as z.infer<typeof createSchema>);
  return { ...rest, ...(card ? { card } : {}), ...(echeck ? { echeck } : {}) };
}

function requireExactlyOneInstrument(body: Body, issues: IssueList): void {
  const present = ['card', 'echeck', 'vendor'].filter((member) => body[member] !== undefined);
  if (present.length === 0) issues.add('', 'exactly one of card, echeck or vendor is required');
  if (present.length > 1) issues.add('', `only one of card, echeck or vendor may be sent, not ${present.join(' and ')}`);
}

const CARD_REQUIRED = ['card_type', 'name_on_card', 'account_number', 'expire_month', 'expire_year'] as const;
const ECHECK_REQUIRED = ['account_holder', 'account_number', 'routing_number', 'sec_code'] as const;

function checkCardForm(card: Body, form: CreateForm, issues: IssueList, now: Date): void {
  if (card.one_time_token !== undefined) {
    if (form === 'locationless') issues.add('card.one_time_token', 'one-time tokens cannot create locationless (organization-level) paymethods');
    for (const member of ['account_number', 'card_type']) if (card[member] !== undefined) issues.add(`card.${member}`, 'must not be sent with one_time_token');
    checkExpiry(card, issues, now);
    return;
  }
  for (const member of CARD_REQUIRED) if (card[member] === undefined) issues.add(`card.${member}`, 'is required');
  checkExpiry(card, issues, now);
}

function checkEcheckForm(echeck: Body, form: CreateForm, issues: IssueList): void {
  if (echeck.one_time_token !== undefined) {
    if (form === 'locationless') issues.add('echeck.one_time_token', 'one-time tokens cannot create locationless (organization-level) paymethods');
    for (const member of ['account_number', 'routing_number']) if (echeck[member] !== undefined) issues.add(`echeck.${member}`, 'must not be sent with one_time_token');
    return;
  }
  for (const member of ECHECK_REQUIRED) if (echeck[member] === undefined) issues.add(`echeck.${member}`, 'is required');
}

/**
 * When both parts are present and individually valid, the expiry must not be
 * before the current UTC month. One part alone is checked later against the
 * stored (or token's) other part.
 */
function checkExpiry(card: Body, issues: IssueList, now: Date): void {
  const { expire_month: month, expire_year: year } = card;
  if (month === undefined || year === undefined) return;
  if (issues.has('card.expire_month') || issues.has('card.expire_year')) return;
  if (!isExpiryCurrentOrFuture(Number(month), toYear(year as string | number), now)) {
    issues.add('card.expire_year', 'the expiry date must not be before the current month');
  }
}

export function assertExpiryCurrentOrFuture(month: number, year: number, now: Date): void {
  if (!isExpiryCurrentOrFuture(month, year, now)) throw new InvalidRequest([{ field: 'card.expire_year', message: 'the expiry date must not be before the current month' }]);
}

function normalizeCreate(data: z.infer<typeof createSchema>): CreateInput {
  const { card, echeck, vendor, fail_on_duplicate: failOnDuplicate, ...top } = data;
  const result: CreateInput = { ...top };
  if (failOnDuplicate !== undefined) result.fail_on_duplicate = String(failOnDuplicate).toLowerCase() === 'true';
  if (card) {
    result.card = stripUndefined({
      card_type: card.card_type?.toLowerCase() as CardType | undefined,
      name_on_card: card.name_on_card,
      account_number: card.account_number,
      expire_month: card.expire_month === undefined ? undefined : Number(card.expire_month),
      expire_year: card.expire_year === undefined ? undefined : toYear(card.expire_year),
      procurement_card: card.procurement_card === undefined ? undefined : String(card.procurement_card).toLowerCase() === 'true',
      suppress_account_updater: card.suppress_account_updater === undefined ? undefined : String(card.suppress_account_updater).toLowerCase() === 'true',
      one_time_token: card.one_time_token,
    });
  }
  if (echeck) {
    result.echeck = stripUndefined({
      account_holder: echeck.account_holder,
      account_number: echeck.account_number,
      routing_number: echeck.routing_number,
      account_type: echeck.account_type?.toLowerCase() as AccountType | undefined,
      sec_code: echeck.sec_code?.toUpperCase() as SecCode | undefined,
      item_description: echeck.item_description,
      one_time_token: echeck.one_time_token,
    });
  }
  if (vendor) result.vendor = { vendor_type: 'paypal', vendor_billing_agreement_token: vendor.vendor_billing_agreement_token as string };
  return stripUndefined(result);
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export { stripUndefined };
