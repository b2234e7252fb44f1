/**
 * What the page can tell the shopper before asking the service: empty or
 * malformed fields, a number that fails the Luhn check, a past expiry. The
 * service checks everything again; these checks only spare a round trip and the
 * publishable key's minting budget (every attempt counts, refused ones included).
 */
import { isDigits, isExpiryCurrentOrFuture, passesLuhn } from '../../../shared/domain/paymethods/rules.ts';

export const CARD_FIELDS = ['name_on_card', 'card_type', 'account_number', 'expire_month', 'expire_year', 'card_verification_value'] as const;
export type CardField = (typeof CARD_FIELDS)[number];
export type CardForm = Readonly<Record<CardField, string>>;

export interface CardProblem {
  field: CardField;
  message: string;
}

/** Every problem the page can see, one per field, in form order; empty when the card may be sent. */
export function cardProblems(card: CardForm, now: Date): CardProblem[] {
  const problems: CardProblem[] = [];
  const add = (field: CardField, message: string): void => void problems.push({ field, message });

  if (card.name_on_card === '') add('name_on_card', 'is required');

  const number = card.account_number;
  if (number === '') add('account_number', 'is required');
  else if (!isDigits(number)) add('account_number', 'must contain digits only');
  else if (number.length < 12 || number.length > 16) add('account_number', 'must be 12 to 16 digits');
  else if (!passesLuhn(number)) add('account_number', 'is not a valid card number');

  const month = /^[0-9]{1,2}$/.test(card.expire_month) ? Number(card.expire_month) : undefined;
  if (card.expire_month === '') add('expire_month', 'is required');
  else if (month === undefined || month < 1 || month > 12) add('expire_month', 'must be a month from 1 to 12');

  const year = /^[0-9]{2}$|^[0-9]{4}$/.test(card.expire_year) ? Number(card.expire_year.length === 2 ? `20${card.expire_year}` : card.expire_year) : undefined;
  if (card.expire_year === '') add('expire_year', 'is required');
  else if (year === undefined) add('expire_year', 'must be 2 or 4 digits');

  if (month !== undefined && month >= 1 && month <= 12 && year !== undefined && !isExpiryCurrentOrFuture(month, year, now)) {
    add('expire_year', 'is in the past');
  }
  if (card.card_verification_value !== '' && !/^[0-9]{3,4}$/.test(card.card_verification_value)) {
    add('card_verification_value', 'must be 3 or 4 digits');
  }
  return problems;
}

/** Why this page cannot tokenize here, or undefined when its origin is one the key allows. */
export function originProblem(origin: string, allowedOrigins: readonly string[]): string | undefined {
  if (allowedOrigins.includes(origin)) return undefined;
  return `This page is open at ${origin}, but the demo publishable key only allows ${allowedOrigins.join(', ')}; `
    + 'the payment service refuses to tokenize for any other site (the key is bound to its origins).';
}
