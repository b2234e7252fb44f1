import * as z from 'zod/mini';
import { InvalidRequest } from '../errors.ts';
import { ORGANIZATION_ID_PATTERN } from '../ids.ts';
import type { RefinementCtx as Ctx } from '../validation.ts';
import { acrossMembers, ALWAYS, failed, parseWith } from '../validation.ts';
import type { CardType } from './model.ts';
import {
  ACCOUNT_TYPES,
  CARD_TYPES,
  SEC_CODES,
  cardBrandMismatch,
  codePointLength,
  isDigits,
  isExpiryCurrentOrFuture,
  isValidRoutingNumber,
  passesLuhn,
} from './rules.ts';

/**
 * The request schemas of paymethods and one-time tokens. Each parses a body
 * into the use case's input in one pass: members are checked and normalized
 * (case, "07" to 7, "27" to 2027, "true" to true) by transforms; the form
 * rules (required members, exactly one instrument, one-time token rules,
 * expiry, card brand) are refinements that run even when a member failed, so
 * one answer lists every failing field; a last transform turns the body into
 * a discriminated union, the schema's output type.
 *
 * The same schemas are the OpenAPI request bodies (shared/http/route-schemas.ts).
 * Refinements are invisible to JSON Schema, so each member states its rule as
 * metadata beside the code that enforces it, and each body's description
 * summarizes the form rules.
 */

const STRING = { error: 'must be a string' } as const;
const OBJECT = { error: 'must be an object' } as const;

/** Lengths count code points; so do JSON Schema's minLength and maxLength. */
function text(max: number, min = 1) {
  return z.string(STRING).check(
    z.superRefine((value, ctx) => {
      const length = codePointLength(value);
      if (length < min) ctx.addIssue(min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
      else if (length > max) ctx.addIssue(`must be at most ${max} characters`);
    }),
    z.meta({ ...(min > 0 ? { minLength: min } : {}), maxLength: max }),
  );
}

/** `extra` is a further check; `extraRule` says what it checks, for the schema's description. */
function digits(min: number, max: number, extra?: (value: string) => string | undefined, extraRule?: string) {
  return z.string(STRING).check(
    z.superRefine((value, ctx) => {
      const message = !isDigits(value)
        ? 'must contain digits only'
        : value.length < min || value.length > max
          ? min === max
            ? `must be ${min} digits`
            : `must be ${min} to ${max} digits`
          : extra?.(value);
      if (message) ctx.addIssue(message);
    }),
    z.meta({ pattern: min === max ? `^[0-9]{${min}}$` : `^[0-9]{${min},${max}}$`, ...(extraRule ? { description: extraRule } : {}) }),
  );
}

/** Tokens carry their prefix and are at most 26 characters in all. */
function token(prefix: string) {
  return z.string(STRING).check(
    z.refine((value) => value.startsWith(prefix) && /^[A-Za-z0-9_-]+$/.test(value.slice(prefix.length)) && value.length <= 26, {
      error: `must be ${prefix} followed by letters or digits, at most 26 characters`,
    }),
    z.meta({ pattern: `^${prefix}[A-Za-z0-9_-]+$`, maxLength: 26 }),
  );
}

/**
 * One of `values` in any case, parsed into the canonical case. The schema
 * states that as a pattern of per-letter classes (JSON Schema regexes have no flags).
 */
function oneOf<const Values extends readonly [string, ...string[]]>(values: Values, canonical: (value: string) => string) {
  return z.pipe(
    z.string(STRING).check(
      z.overwrite(canonical),
      z.meta({ description: `One of ${values.join(', ')}, in any case.`, pattern: anyCasePattern(values), examples: [values[0]] }),
    ),
    z.enum(values, { error: `must be one of ${values.join(', ')}` }),
  );
}

function anyCasePattern(values: readonly string[]): string {
  const anyCase = (value: string) =>
    [...value].map((char) => (char.toLowerCase() === char.toUpperCase() ? char : `[${char.toLowerCase()}${char.toUpperCase()}]`)).join('');
  return `^(${values.map(anyCase).join('|')})$`;
}

/** The spec lets expiry members be strings or integers; both become integers ("07" is 7, "27" is 2027). */
const expireMonth = z.pipe(
  z.union([z.string(), z.number()], { error: 'must be a string or an integer' }).check(
    z.refine((value) => (typeof value === 'number' ? Number.isInteger(value) : /^[0-9]{1,2}$/.test(value)) && Number(value) >= 1 && Number(value) <= 12, {
      error: 'must be a month from 1 to 12',
    }),
    z.meta({ description: 'Month 1 to 12: an integer, or a string of one or two digits.', examples: [12, '07'] }),
  ),
  z.transform(Number),
);

const expireYear = z.pipe(
  z.union([z.string(), z.number()], { error: 'must be a string or an integer' }).check(
    z.refine(
      (value) =>
        typeof value === 'number' ? Number.isInteger(value) && ((value >= 0 && value <= 99) || (value >= 2000 && value <= 9999)) : /^([0-9]{2}|[0-9]{4})$/.test(value) && fullYear(value) >= 2000,
      { error: 'must be a year from 2000: four digits, or two meaning 20yy' },
    ),
    z.meta({ description: 'Year from 2000: four digits, or two meaning 20yy, as an integer or a string.', examples: [2031, '2031', 31] }),
  ),
  z.transform(fullYear),
);

/** Two digits, as a string or an integer below 100, mean 20yy, as on the Account Updater's files. */
function fullYear(value: string | number): number {
  if (typeof value === 'string') return value.length === 2 ? 2000 + Number(value) : Number(value);
  return value < 100 ? 2000 + value : value;
}

/** `true`/`false` or the strings "true"/"false" (any case), parsed into a boolean. */
const booleanish = z.pipe(
  z.union([z.boolean(), z.string()], { error: 'must be true or false' }).check(
    z.refine((value) => typeof value === 'boolean' || ['true', 'false'].includes(value.toLowerCase()), { error: 'must be true or false' }),
    z.meta({ description: 'true or false, or the strings "true" or "false" (any case). Returned as a boolean.' }),
  ),
  z.transform((value) => value === true || String(value).toLowerCase() === 'true'),
);

/** A member that is named (so not "unrecognized") but always refused: `not: {}` in JSON Schema. */
function refused(message: string) {
  return z.optional(
    z.unknown().check(
      z.superRefine((_value, ctx) => ctx.addIssue(message)),
      z.meta({ not: {}, description: `Refused: ${message}.` }),
    ),
  );
}

const notUpdatable = refused('cannot be changed by an update');
const oneTimeToken = z.optional(token('ott_'));

const vendorOnUpdate = z.strictObject({ vendor_billing_agreement_token: notUpdatable, vendor_type: notUpdatable }, OBJECT);

const cardMembers = {
  card_type: z.optional(oneOf(CARD_TYPES, (value) => value.toLowerCase())),
  name_on_card: z.optional(text(50)),
  account_number: z.optional(
    digits(12, 16, (value) => (passesLuhn(value) ? undefined : 'is not a valid card number'), 'Must pass the Luhn check and agree with card_type. Never returned.'),
  ),
  expire_month: z.optional(expireMonth),
  expire_year: z.optional(expireYear),
  card_verification_value: z.optional(digits(3, 4, undefined, 'Validated, never stored or returned.')),
  procurement_card: z.optional(booleanish),
  customer_accounting_code: z.optional(text(17)),
  suppress_account_updater: z.optional(booleanish),
};

const echeckMembers = {
  account_holder: z.optional(text(50)),
  account_number: z.optional(digits(4, 17, undefined, 'Never returned.')),
  routing_number: z.optional(
    digits(
      9,
      9,
      (value) => (isValidRoutingNumber(value) ? undefined : 'is not a valid U.S. (ABA) or Canadian (0AAABBBBB) routing number'),
      'A U.S. routing number passing the ABA checksum, or a Canadian one written 0AAABBBBB.',
    ),
  ),
  account_type: z.optional(oneOf(ACCOUNT_TYPES, (value) => value.toLowerCase())),
  sec_code: z.optional(oneOf(SEC_CODES, (value) => value.toUpperCase())),
  item_description: z.optional(text(255, 0)),
};

const vendorMembers = {
  vendor_type: z.optional(oneOf(['paypal'], (value) => value.toLowerCase())),
  vendor_billing_agreement_token: z.optional(text(64)),
};

/** Member lists of the form rules; the transforms narrow with the same lists (hasAll), so they cannot disagree. */
const CARD_REQUIRED = ['card_type', 'name_on_card', 'account_number', 'expire_month', 'expire_year'] as const;
const CARD_REQUIRED_BESIDE_TOKEN = ['name_on_card'] as const;
const CARD_REFUSED_BESIDE_TOKEN = ['account_number'] as const;
const ECHECK_REQUIRED = ['account_holder', 'account_number', 'routing_number', 'sec_code'] as const;
const ECHECK_REQUIRED_BESIDE_TOKEN = ['account_holder'] as const;
const ECHECK_REFUSED_BESIDE_TOKEN = ['account_number', 'routing_number'] as const;
const ECHECK_REQUIRED_ON_UPDATE = ['account_holder', 'routing_number'] as const;
const VENDOR_REQUIRED = ['vendor_type', 'vendor_billing_agreement_token'] as const;

type Present<T, K extends keyof T> = T & { [P in K]-?: Exclude<T[P], undefined> };

function hasAll<T extends object, K extends keyof T>(value: T, members: readonly K[]): value is Present<T, K> {
  return members.every((member) => value[member] !== undefined);
}

function requireAll<T extends object>(value: T, members: ReadonlyArray<keyof T & string>, ctx: Ctx): void {
  for (const member of members) if (value[member] === undefined) ctx.addIssue({ code: 'custom', path: [member], message: 'is required' });
}

function refuseAll<T extends object>(value: T, members: ReadonlyArray<keyof T & string>, message: string, ctx: Ctx): void {
  for (const member of members) if (value[member] !== undefined) ctx.addIssue({ code: 'custom', path: [member], message });
}

/**
 * The use case's clock while parseBody runs (parsing is synchronous, so no
 * other request can see it); the wall clock for a direct safeParse.
 */
let parseTime: Date | undefined;

/** Both expiry parts, when present and valid: not before the current UTC month. */
function checkExpiry(card: { expire_month?: unknown; expire_year?: unknown }, ctx: Ctx): void {
  const { expire_month: month, expire_year: year } = card;
  if (typeof month !== 'number' || typeof year !== 'number' || failed(ctx, 'expire_month') || failed(ctx, 'expire_year')) return;
  if (!isExpiryCurrentOrFuture(month, year, parseTime ?? new Date())) ctx.addIssue({ code: 'custom', path: ['expire_year'], message: EXPIRED });
}

const EXPIRED = 'the expiry date must not be before the current month';

function checkBrand(card: { card_type?: CardType; account_number?: string }, ctx: Ctx): void {
  const { card_type: type, account_number: number } = card;
  if (type === undefined || number === undefined || failed(ctx, 'card_type') || failed(ctx, 'account_number')) return;
  const mismatch = cardBrandMismatch(type, number);
  if (mismatch) ctx.addIssue({ code: 'custom', path: ['card_type'], message: mismatch });
}

/** Where the body may carry a one-time token, a card or echeck follows the token's rules when it carries one. */
type TokenRule = 'accepted' | 'refused' | 'minting';

const TOKEN_REFUSED_LOCATIONLESS = 'one-time tokens cannot create locationless (organization-level) paymethods';

function cardSchema(tokens: TokenRule) {
  const one_time_token =
    tokens === 'accepted' ? oneTimeToken : refused(tokens === 'refused' ? TOKEN_REFUSED_LOCATIONLESS : 'is not accepted when minting a one-time token');
  return z.strictObject({ ...cardMembers, one_time_token }, OBJECT).check(
    acrossMembers((card, ctx) => {
      if (card.one_time_token !== undefined && tokens !== 'minting') {
        requireAll(card, CARD_REQUIRED_BESIDE_TOKEN, ctx);
        refuseAll(card, CARD_REFUSED_BESIDE_TOKEN, 'must not be sent with one_time_token', ctx);
      } else {
        requireAll(card, CARD_REQUIRED, ctx);
        checkBrand(card, ctx);
      }
      checkExpiry(card, ctx);
    }),
  );
}

function echeckSchema(tokens: TokenRule) {
  const one_time_token =
    tokens === 'accepted' ? oneTimeToken : refused(tokens === 'refused' ? TOKEN_REFUSED_LOCATIONLESS : 'is not accepted when minting a one-time token');
  return z.strictObject({ ...echeckMembers, one_time_token }, OBJECT).check(
    acrossMembers((echeck, ctx) => {
      if (echeck.one_time_token !== undefined && tokens !== 'minting') {
        requireAll(echeck, ECHECK_REQUIRED_BESIDE_TOKEN, ctx);
        refuseAll(echeck, ECHECK_REFUSED_BESIDE_TOKEN, 'must not be sent with one_time_token', ctx);
      } else {
        requireAll(echeck, ECHECK_REQUIRED, ctx);
      }
    }),
  );
}

const vendorSchema = z.strictObject(vendorMembers, OBJECT).check(acrossMembers((vendor, ctx) => requireAll(vendor, VENDOR_REQUIRED, ctx)));

type CardBody = z.output<ReturnType<typeof cardSchema>>;
type EcheckBody = z.output<ReturnType<typeof echeckSchema>>;
type VendorBody = z.output<typeof vendorSchema>;

/** What the service keeps of a card body: the CVV and accounting code are validated, never stored. */
function storable<T extends { card_verification_value?: unknown; customer_accounting_code?: unknown }>(card: T) {
  const { card_verification_value: _cvv, customer_accounting_code: _accountingCode, ...kept } = card;
  return kept;
}

/**
 * A card or echeck as the use cases take it: from a number, or from a
 * one-time token with the members sent beside it. Undefined only for bodies
 * the refinements above refused, which never reach the transforms.
 */
function parsedCard(card: CardBody) {
  const { one_time_token: token, ...members } = storable(card);
  if (typeof token === 'string') return hasAll(members, CARD_REQUIRED_BESIDE_TOKEN) ? { instrument: 'card_token' as const, one_time_token: token, card: members } : undefined;
  return hasAll(members, CARD_REQUIRED) ? { instrument: 'card' as const, card: members } : undefined;
}

function parsedEcheck(echeck: EcheckBody) {
  const { one_time_token: token, ...members } = echeck;
  if (typeof token === 'string') return hasAll(members, ECHECK_REQUIRED_BESIDE_TOKEN) ? { instrument: 'echeck_token' as const, one_time_token: token, echeck: members } : undefined;
  return hasAll(members, ECHECK_REQUIRED) ? { instrument: 'echeck' as const, echeck: members } : undefined;
}

function parsedVendor(vendor: VendorBody) {
  return hasAll(vendor, VENDOR_REQUIRED) ? { instrument: 'vendor' as const, vendor } : undefined;
}

/** Refinements guarantee the transforms a complete body; this keeps the type honest if they ever disagree. */
function unreachable(ctx: z.core.ParsePayload): never {
  ctx.issues.push({ code: 'custom', message: 'the form rules and the parsed type disagree', input: ctx.value, path: [] });
  return z.NEVER;
}

const commonMembers = {
  customer_token: z.optional(token('cst_')),
  customer_id: z.optional(text(15)),
  billing_address_token: z.optional(token('add_')),
  label: z.optional(text(50)),
  notes: z.optional(text(50, 0)),
};

/** Create-only: the duplicate check (ports.ts, PaymethodCreates.create). */
const createOnlyMembers = {
  fail_on_duplicate: z.optional(booleanish).check(
    z.meta({
      description:
        'When true, refuse (409 DUPLICATE_PAYMETHOD) a card or echeck whose fingerprint the customer already has (without a customer: '
        + 'the location\'s, or the organization\'s, paymethods without a customer). true or false, or the strings "true" or "false".',
    }),
  ),
};

const CREATE_DESCRIPTION =
  'Exactly one of card, echeck or vendor (vendors is its alias). A card needs card_type, name_on_card, account_number, expire_month and '
  + 'expire_year, and card_type must agree with the number\'s issuer prefix (and, for amex, its 15 digits); with a one_time_token it needs '
  + 'name_on_card and must not carry account_number (a card_type beside it overrides the token\'s and must agree with its number). An echeck needs account_holder, account_number, routing_number and sec_code; '
  + 'with a one_time_token it needs account_holder and must not carry account_number or routing_number. A vendor needs vendor_type and '
  + 'vendor_billing_agreement_token. The expiry must not be before the current UTC month. Members whose value is null are treated as absent; '
  + 'unknown members are refused.';

type InstrumentMembers = { card?: CardBody; echeck?: EcheckBody; vendor?: VendorBody; vendors?: VendorBody };

function instrumentMembers(tokens: TokenRule) {
  return {
    card: z.optional(cardSchema(tokens)),
    echeck: z.optional(echeckSchema(tokens)),
    vendor: z.optional(vendorSchema),
    vendors: z.optional(vendorSchema.check(z.meta({ description: 'Accepted alias of vendor (the spelling of an example in the spec); not together with vendor.' }))),
  };
}

/** Exactly one of card, echeck or vendor; `vendors` is the spec's example spelling of `vendor`, not together with it. */
const exactlyOneInstrument = z.superRefine((value: InstrumentMembers, ctx) => {
  const present = (['card', 'echeck', 'vendor', 'vendors'] as const).filter((member) => value[member] !== undefined);
  if (present.includes('vendor') && present.includes('vendors')) ctx.addIssue({ code: 'custom', path: ['vendors'], message: 'must not be sent together with vendor' });
  const instruments = present.filter((member) => member !== 'vendors' || !present.includes('vendor'));
  if (instruments.length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of card, echeck or vendor is required' });
  if (instruments.length > 1) ctx.addIssue({ code: 'custom', path: [], message: `only one of card, echeck or vendor may be sent, not ${instruments.join(' and ')}` });
}, ALWAYS);

/** The body as the use case takes it: the members beside the instrument, and the instrument as a discriminated union. */
function toCreate<Body extends InstrumentMembers>(value: Body, ctx: z.core.ParsePayload) {
  const { card, echeck, vendor, vendors, ...common } = value;
  const vendorBody = vendor ?? vendors;
  const instrument = card ? parsedCard(card) : echeck ? parsedEcheck(echeck) : vendorBody ? parsedVendor(vendorBody) : undefined;
  return instrument ? { ...common, ...instrument } : unreachable(ctx);
}

const organizationId = z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') }).check(
  z.regex(ORGANIZATION_ID_PATTERN, 'must be org_ followed by 1 to 60 letters, digits, _ or -'),
  z.meta({ description: 'The organization the paymethod belongs to (403 unless the caller may act on it).' }),
);

const createBody = z.strictObject({ ...commonMembers, ...createOnlyMembers, ...instrumentMembers('accepted') }).check(exactlyOneInstrument, z.meta({ description: CREATE_DESCRIPTION }));
const locationlessCreateBody = z
  .strictObject({ organization_id: organizationId, ...commonMembers, ...createOnlyMembers, ...instrumentMembers('refused') })
  .check(exactlyOneInstrument, z.meta({ description: CREATE_DESCRIPTION }));

/** The create body of the customer and location routes. */
export const createBodySchema = z.pipe(createBody, z.transform((value: z.output<typeof createBody>, ctx) => toCreate(value, ctx)));
/** The create body of the locationless route: organization_id names the organization; no one-time tokens. */
export const locationlessCreateBodySchema = z.pipe(
  locationlessCreateBody,
  z.transform((value: z.output<typeof locationlessCreateBody>, ctx) => toCreate(value, ctx)),
);

export type PaymethodCreate = z.output<typeof createBodySchema> | z.output<typeof locationlessCreateBodySchema>;


/** A one-time token carries a full card or echeck, exactly as a create would, without a one_time_token of its own. */
export const oneTimeTokenSchema = z.pipe(
  z
    .strictObject({ card: z.optional(cardSchema('minting')), echeck: z.optional(echeckSchema('minting')) })
    .check(
      z.superRefine((value, ctx) => {
        const count = (value.card === undefined ? 0 : 1) + (value.echeck === undefined ? 0 : 1);
        if (count !== 1) ctx.addIssue({ code: 'custom', path: [], message: count === 0 ? 'exactly one of card or echeck is required' : 'only one of card or echeck may be sent' });
      }, ALWAYS),
      z.meta({
        description:
          'Exactly one of card or echeck, complete as on a paymethod create (card: card_type, name_on_card, account_number, expire_month, '
          + 'expire_year; echeck: account_holder, account_number, routing_number, sec_code).',
      }),
    ),
  z.transform((value, ctx) => {
    const parsed = value.card ? parsedCard(value.card) : value.echeck ? parsedEcheck(value.echeck) : undefined;
    return parsed?.instrument === 'card' || parsed?.instrument === 'echeck' ? parsed : unreachable(ctx);
  }),
);

export type OneTimeTokenRequest = z.output<typeof oneTimeTokenSchema>;
/** A card or echeck from its number, as a create or a one-time token parses it. */
export type NewCard = Extract<OneTimeTokenRequest, { instrument: 'card' }>['card'];
export type NewEcheck = Extract<OneTimeTokenRequest, { instrument: 'echeck' }>['echeck'];

export const updateBodySchema = z.pipe(
  z
    .strictObject({
      ...commonMembers,
      card: z.optional(
        z.strictObject(
          { ...cardMembers, account_number: notUpdatable, card_type: notUpdatable, one_time_token: notUpdatable },
          OBJECT,
        ).check(acrossMembers((card, ctx) => checkExpiry(card, ctx))),
      ),
      echeck: z.optional(
        z.strictObject(
          { ...echeckMembers, account_number: notUpdatable, one_time_token: notUpdatable },
          OBJECT,
        ).check(acrossMembers((echeck, ctx) => requireAll(echeck, ECHECK_REQUIRED_ON_UPDATE, ctx))),
      ),
      vendor: z.optional(vendorOnUpdate),
      // The create's alias of vendor, refused the same way rather than as an unknown member.
      vendors: z.optional(vendorOnUpdate),
    })
    .check(
      z.superRefine((value, ctx) => {
        if (Object.keys(value).length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'at least one member to update is required' });
      }, ALWAYS),
      z.meta({
        minProperties: 1,
        description:
          'Partial update: only the members sent change. An echeck update must carry account_holder and routing_number. '
          + 'Account numbers cannot be changed. Members whose value is null are treated as absent; unknown members are refused.',
      }),
    ),
  // Only what changes a record remains: refused members never get here, the CVV and accounting code are dropped.
  z.transform(({ card, echeck, vendor: _vendor, ...common }) => {
    return { ...common, ...(card ? { card: withoutRefused(storable(card)) } : {}), ...(echeck ? { echeck: withoutRefused(echeck) } : {}) };
  }),
);

function withoutRefused<T extends { account_number?: unknown; card_type?: unknown; one_time_token?: unknown }>(members: T) {
  const { account_number: _number, card_type: _type, one_time_token: _token, ...changes } = members;
  return changes;
}

export type PaymethodUpdate = z.output<typeof updateBodySchema>;

/** Parses a body with one of the schemas above at the use case's time; every issue is reported at once. */
export function parseBody<Schema extends z.ZodMiniType>(schema: Schema, body: unknown, now: Date): z.output<Schema> {
  parseTime = now;
  try {
    const parsed = parseWith(schema, body);
    if (parsed.value === undefined) throw new InvalidRequest(parsed.issues);
    return parsed.value;
  } finally {
    parseTime = undefined;
  }
}

/** A token's expiry with a month or year sent beside it, or a stored expiry with an updated part. */
export function assertExpiryCurrentOrFuture(month: number, year: number, now: Date): void {
  if (!isExpiryCurrentOrFuture(month, year, now)) throw new InvalidRequest([{ field: 'card.expire_year', message: EXPIRED }]);
}
