import { InvalidRequest } from '#shared/domain/errors.ts';
import type { FieldIssue } from '#shared/domain/errors.ts';

/**
 * List query parameters, shared by every list route (paymethods, documents).
 * A route declares its filters; this module accepts them both as plain query
 * parameters (`?customer_token=cst_x`) and inside a `filter` expression
 * (`customer_token eq 'cst_x' and start_au_updated_date eq '2024-05-01'`),
 * plus `page_size`, `page_index` and the opaque `cursor` of `links.next`.
 *
 * Expression grammar (contract, "Lists"):
 *   expression := term ( "and" term )*
 *   term       := name "eq" value
 *   value      := "'" ( any character but "'" | "''" )* "'"  |  run of characters without spaces or quotes
 * Keywords are case-insensitive; a doubled quote inside a quoted value is one quote.
 */

export type FilterSpec =
  | { kind: 'text'; maxLength?: number; pattern?: RegExp; patternMessage?: string }
  | { kind: 'enum'; values: readonly string[] }
  /** `yyyy-mm-dd` or `yyyy-mm-ddThh:mm:ss` (UTC); a bare start date means 00:00:00, a bare end date 23:59:59. */
  | { kind: 'date'; bound: 'start' | 'end' };

export type FilterSpecs = Readonly<Record<string, FilterSpec>>;

export interface ListQuery {
  pageSize: number;
  pageIndex: number;
  cursor?: string;
  /** Normalized filter values by name; dates as `yyyy-mm-ddThh:mm:ss`. */
  filters: Record<string, string>;
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
const MAX_PAGE_INDEX = 1_000_000;
const RESERVED = new Set(['page_size', 'page_index', 'cursor', 'filter']);

export function parseListQuery(query: Readonly<Record<string, readonly string[]>>, specs: FilterSpecs): ListQuery {
  const issues: FieldIssue[] = [];
  const single = (name: string): string | undefined => {
    const values = query[name];
    if (values === undefined) return undefined;
    if (values.length > 1) issues.push({ field: name, message: 'must be given once' });
    return values[0];
  };

  const raw: Array<{ name: string; value: string; field: string }> = [];
  for (const name of Object.keys(query)) {
    if (RESERVED.has(name)) continue;
    if (!(name in specs)) {
      issues.push({ field: name, message: 'is not a recognized query parameter' });
      continue;
    }
    const value = single(name);
    if (value !== undefined) raw.push({ name, value, field: name });
  }
  const expression = single('filter');
  if (expression !== undefined) {
    try {
      for (const term of parseFilterExpression(expression)) {
        if (!(term.name in specs)) issues.push({ field: 'filter', message: `${term.name} is not a recognized filter; allowed: ${Object.keys(specs).join(', ') || 'none'}` });
        else raw.push({ ...term, field: `filter.${term.name}` });
      }
    } catch (error) {
      if (!(error instanceof FilterSyntaxError)) throw error;
      issues.push({ field: 'filter', message: error.message });
    }
  }

  const filters: Record<string, string> = {};
  for (const { name, value, field } of raw) {
    if (name in filters) {
      issues.push({ field, message: `${name} is given more than once` });
      continue;
    }
    const normalized = normalizeFilter(value, specs[name] as FilterSpec);
    if ('error' in normalized) issues.push({ field, message: normalized.error });
    else filters[name] = normalized.value;
  }

  const pageSize = integerParameter(single('page_size'), 'page_size', 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, issues);
  const pageIndex = integerParameter(single('page_index'), 'page_index', 0, MAX_PAGE_INDEX, 0, issues);
  const cursor = single('cursor');
  if (issues.length > 0) throw new InvalidRequest(issues, 'INVALID_QUERY');
  return { pageSize, pageIndex, ...(cursor !== undefined ? { cursor } : {}), filters };
}

function integerParameter(value: string | undefined, field: string, min: number, max: number, fallback: number, issues: FieldIssue[]): number {
  if (value === undefined) return fallback;
  const number = /^[0-9]{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max)) {
    issues.push({ field, message: `must be an integer from ${min} to ${max}` });
    return fallback;
  }
  return number;
}

function normalizeFilter(value: string, spec: FilterSpec): { value: string } | { error: string } {
  switch (spec.kind) {
    case 'text':
      if (value.length === 0) return { error: 'must not be empty' };
      if (spec.maxLength !== undefined && [...value].length > spec.maxLength) return { error: `must be at most ${spec.maxLength} characters` };
      if (spec.pattern && !spec.pattern.test(value)) return { error: spec.patternMessage ?? 'is not valid' };
      return { value };
    case 'enum':
      return spec.values.includes(value.toLowerCase()) ? { value: value.toLowerCase() } : { error: `must be one of ${spec.values.join(', ')}` };
    case 'date': {
      const normalized = normalizeDate(value, spec.bound);
      return normalized === undefined ? { error: 'must be a date yyyy-mm-dd or a UTC date-time yyyy-mm-ddThh:mm:ss' } : { value: normalized };
    }
  }
}

/** Calendar-checked; returns `yyyy-mm-ddThh:mm:ss` or undefined. */
export function normalizeDate(value: string, bound: 'start' | 'end'): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?$/.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as [number, number, number, number, number?, number?, number?];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  if (hour !== undefined && (hour > 23 || (minute as number) > 59 || (second as number) > 59)) return undefined;
  const time = match[4] !== undefined ? `${match[4]}:${match[5]}:${match[6]}` : bound === 'start' ? '00:00:00' : '23:59:59';
  return `${match[1]}-${match[2]}-${match[3]}T${time}`;
}

export class FilterSyntaxError extends Error {}

/** Parses `<name> eq '<value>' and ...` into terms; throws FilterSyntaxError with a position on bad input. */
export function parseFilterExpression(expression: string): Array<{ name: string; value: string }> {
  const terms: Array<{ name: string; value: string }> = [];
  let position = 0;
  const fail = (message: string): never => {
    throw new FilterSyntaxError(`${message} at position ${position + 1}`);
  };
  const skipSpaces = () => {
    while (position < expression.length && /\s/.test(expression[position] as string)) position += 1;
  };
  const word = (): string => {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expression.slice(position));
    if (!match) return '';
    position += match[0].length;
    return match[0];
  };

  skipSpaces();
  if (position === expression.length) fail('the filter expression is empty');
  for (;;) {
    skipSpaces();
    const name = word();
    if (!name) fail('expected a filter name');
    skipSpaces();
    const operatorAt = position;
    if (word().toLowerCase() !== 'eq') {
      position = operatorAt;
      fail(`expected eq after ${name}`);
    }
    skipSpaces();
    terms.push({ name, value: readValue() });
    skipSpaces();
    if (position === expression.length) return terms;
    const joinAt = position;
    if (word().toLowerCase() !== 'and' || !/\s/.test(expression[position] ?? '')) {
      position = joinAt;
      fail("expected 'and' between terms");
    }
  }

  function readValue(): string {
    if (expression[position] === "'") {
      let value = '';
      position += 1;
      for (;;) {
        if (position >= expression.length) fail('unterminated quoted value');
        const char = expression[position] as string;
        if (char === "'") {
          if (expression[position + 1] === "'") {
            value += "'";
            position += 2;
            continue;
          }
          position += 1;
          return value;
        }
        value += char;
        position += 1;
      }
    }
    const match = /^[^\s']+/.exec(expression.slice(position));
    if (!match) return fail('expected a value');
    position += match[0].length;
    if (expression[position] === "'") fail('a quote inside an unquoted value');
    return match[0];
  }
}
