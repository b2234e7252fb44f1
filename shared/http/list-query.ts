/**
 * Query parameters of a list route: filters, given as plain parameters
 * (`?type=png`) or as one `filter` expression (`type eq 'png' and ...`), and
 * the pagination members. A route declares its filters; this turns the query
 * into typed criteria and the `search_criteria` echo, or a 400 naming every
 * problem at once, and shapes the list envelope. Self-contained on purpose:
 * it depends on the domain errors and the envelope only.
 *
 * Expression grammar (keywords case-insensitive):
 *   expression := term ( "and" term )*
 *   term       := name "eq" value
 *   value      := "'" ( any character but "'" | "''" )* "'" | a run without spaces or quotes
 */
import type { FieldIssue } from '#shared/domain/errors.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { responseMember } from './envelope.ts';
import { emptyRecord, unknownQueryParameterIssues } from './hostile-input.ts';
import type { ApiResponse } from './response.ts';

export type FilterSpec =
  /** `example` is a valid value, shown in the OpenAPI document (and sent by its tests). */
  | { kind: 'string'; maxLength?: number; pattern?: RegExp; description?: string; example?: string }
  /** Matched case-insensitively and returned as listed. */
  | { kind: 'enum'; values: readonly string[] }
  /** `yyyy-mm-dd` or `yyyy-mm-ddThh:mm:ss` (UTC); a date alone means the start or the end of that day. */
  | { kind: 'date'; bound: 'start' | 'end'; range: string };

export interface ListQuerySpec<Name extends string> {
  filters: Readonly<Record<Name, FilterSpec>>;
  defaultPageSize?: number;
  maxPageSize?: number;
}

export interface ListQuery<Name extends string> {
  /** Applied filters; dates normalized to `yyyy-mm-ddThh:mm:ss`. */
  filters: Partial<Record<Name, string>>;
  pageSize: number;
  pageIndex: number;
  /** Opaque position from `links.next`, if given. */
  cursor?: string;
}

export const PAGE_PARAMETERS = ['page_size', 'page_index', 'cursor'] as const;
export const FILTER_PARAMETER = 'filter';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/**
 * A page past the end of a list is an empty page, whatever its index; the
 * bound is only the nine digits page boundaries order by (no list here comes
 * near a billion pages).
 */
export const MAX_PAGE_INDEX = 999_999_999;
/** The cursors this service issues in `links.next`. */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,2048}$/;

const issue = (field: string, message: string): FieldIssue => ({ field, message });

export function parseListQuery<Name extends string>(query: Readonly<Record<string, readonly string[]>>, spec: ListQuerySpec<Name>): ListQuery<Name> {
  const issues: FieldIssue[] = [];
  const known = new Set<string>([...Object.keys(spec.filters), ...PAGE_PARAMETERS, FILTER_PARAMETER]);
  // Every name a client sends is looked up as an own member only: `constructor` or `__proto__` is just an unknown name.
  const single = (name: string): string | undefined => {
    const values = Object.hasOwn(query, name) ? query[name] : undefined;
    if (!values || values.length === 0) return undefined;
    if (values.length > 1) issues.push(issue(name, 'must be given once'));
    return values[0];
  };
  issues.push(...unknownQueryParameterIssues(query, known));

  const terms: Array<{ name: string; value: string }> = [];
  for (const name of Object.keys(spec.filters)) {
    const value = single(name);
    if (value !== undefined) terms.push({ name, value });
  }
  const expression = single(FILTER_PARAMETER);
  if (expression !== undefined && expression.trim() !== '') {
    try {
      terms.push(...parseFilterExpression(expression));
    } catch (error) {
      issues.push(issue(FILTER_PARAMETER, (error as Error).message));
    }
  }

  const filters = emptyRecord<string>() as Partial<Record<Name, string>>;
  const seen = new Set<string>();
  for (const term of terms) {
    const filterSpec = Object.hasOwn(spec.filters, term.name) ? (spec.filters as Record<string, FilterSpec>)[term.name] : undefined;
    if (!filterSpec) {
      issues.push(issue(FILTER_PARAMETER, `${term.name} is not a recognized filter (recognized: ${Object.keys(spec.filters).join(', ')})`));
      continue;
    }
    if (seen.has(term.name)) {
      issues.push(issue(term.name, 'must be given once'));
      continue;
    }
    seen.add(term.name);
    const normalized = normalizeFilterValue(term.value, filterSpec);
    if ('message' in normalized) issues.push(issue(term.name, normalized.message));
    else filters[term.name as Name] = normalized.value;
  }
  issues.push(...rangeIssues(filters as Record<string, string>, spec.filters as Record<string, FilterSpec>));

  const maxPageSize = spec.maxPageSize ?? MAX_PAGE_SIZE;
  const pageSize = integerParameter(single('page_size'), 'page_size', 1, maxPageSize, spec.defaultPageSize ?? DEFAULT_PAGE_SIZE, issues);
  const pageIndex = integerParameter(single('page_index'), 'page_index', 0, MAX_PAGE_INDEX, 0, issues);
  const cursor = single('cursor');
  if (cursor !== undefined && !CURSOR_PATTERN.test(cursor)) issues.push(issue('cursor', 'is not a cursor this service issued'));

  if (issues.length > 0) throw new InvalidRequest(issues, 'INVALID_QUERY');
  return { filters, pageSize, pageIndex, ...(cursor !== undefined ? { cursor } : {}) };
}

/** Splits an expression into its terms; throws with a message naming the problem. */
export function parseFilterExpression(expression: string): Array<{ name: string; value: string }> {
  const terms: Array<{ name: string; value: string }> = [];
  let position = 0;
  const skipSpaces = () => {
    while (position < expression.length && /\s/.test(expression[position] as string)) position += 1;
  };
  const word = (): string => {
    const match = /^[^\s']+/.exec(expression.slice(position));
    position += match?.[0].length ?? 0;
    return match?.[0] ?? '';
  };
  const keyword = (expected: string) => {
    skipSpaces();
    const start = position;
    const found = word();
    if (found.toLowerCase() !== expected) throw new Error(`expected "${expected}" at character ${start + 1}${found ? `, found "${found}"` : ''}`);
  };
  for (;;) {
    skipSpaces();
    const nameStart = position;
    const name = word();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`expected a filter name at character ${nameStart + 1}`);
    keyword('eq');
    skipSpaces();
    terms.push({ name, value: filterValue() });
    skipSpaces();
    if (position >= expression.length) return terms;
    keyword('and');
  }

  function filterValue(): string {
    if (expression[position] !== "'") {
      const start = position;
      const value = word();
      if (!value) throw new Error(`expected a value at character ${start + 1}`);
      return value;
    }
    let value = '';
    const opening = position;
    position += 1;
    for (;;) {
      const quote = expression.indexOf("'", position);
      if (quote < 0) throw new Error(`the quote opened at character ${opening + 1} is not closed`);
      value += expression.slice(position, quote);
      if (expression[quote + 1] === "'") {
        value += "'";
        position = quote + 2;
        continue;
      }
      position = quote + 1;
      if (position < expression.length && !/\s/.test(expression[position] as string)) {
        throw new Error(`expected a space after the value ending at character ${position}`);
      }
      return value;
    }
  }
}

function normalizeFilterValue(value: string, spec: FilterSpec): { value: string } | { message: string } {
  switch (spec.kind) {
    case 'enum': {
      const match = spec.values.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
      return match ? { value: match } : { message: `must be one of ${spec.values.join(', ')}` };
    }
    case 'date': {
      const normalized = normalizeDate(value, spec.bound);
      return normalized ? { value: normalized } : { message: 'must be a date yyyy-mm-dd or a date-time yyyy-mm-ddThh:mm:ss (UTC)' };
    }
    case 'string':
      if (value.length === 0) return { message: 'must not be empty' };
      if (spec.maxLength !== undefined && [...value].length > spec.maxLength) return { message: `must be at most ${spec.maxLength} characters` };
      if (spec.pattern && !spec.pattern.test(value)) return { message: `must be ${spec.description ?? `of the form ${spec.pattern.source}`}` };
      return { value };
  }
}

/** `yyyy-mm-dd` (start: 00:00:00, end: 23:59:59) or `yyyy-mm-ddThh:mm:ss`, checked against the calendar. */
export function normalizeDate(value: string, bound: 'start' | 'end'): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2}))?$/.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => (part === undefined ? undefined : Number(part)));
  const time = hour === undefined ? (bound === 'start' ? [0, 0, 0] : [23, 59, 59]) : [hour, minute as number, second as number];
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day as number, time[0], time[1], time[2]));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== (month as number) - 1 ||
    date.getUTCDate() !== day ||
    date.getUTCHours() !== time[0] ||
    date.getUTCMinutes() !== time[1] ||
    date.getUTCSeconds() !== time[2]
  ) {
    return undefined;
  }
  return date.toISOString().slice(0, 19);
}

function rangeIssues(filters: Record<string, string>, specs: Record<string, FilterSpec>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.kind !== 'date' || spec.bound !== 'end' || filters[name] === undefined) continue;
    const start = Object.entries(specs).find(([, other]) => other.kind === 'date' && other.bound === 'start' && other.range === spec.range)?.[0];
    if (start && filters[start] !== undefined && (filters[start] as string) > (filters[name] as string)) {
      issues.push(issue(name, `must not be before ${start}`));
    }
  }
  return issues;
}

function integerParameter(raw: string | undefined, name: string, min: number, max: number, fallback: number, issues: FieldIssue[]): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    issues.push(issue(name, `must be an integer from ${min} to ${max}`));
    return fallback;
  }
  return Number(raw);
}

/**
 * `links.self` (the list as requested) and `links.next` (same filters, the
 * next page_index and, when the store gave one, its cursor).
 */
export function listLinks(listUrl: string, query: Readonly<Record<string, readonly string[]>>, next?: { pageIndex: number; cursor?: string }): { self: string; next?: string } {
  const self = withQuery(listUrl, query, []);
  if (!next) return { self };
  const carried = withQuery(listUrl, query, ['page_index', 'cursor']);
  const nextQuery = new URLSearchParams({ page_index: String(next.pageIndex), ...(next.cursor !== undefined ? { cursor: next.cursor } : {}) });
  return { self, next: `${carried}${carried.includes('?') ? '&' : '?'}${nextQuery.toString()}` };
}

function withQuery(url: string, query: Readonly<Record<string, readonly string[]>>, drop: readonly string[]): string {
  const parameters = new URLSearchParams();
  for (const [name, values] of Object.entries(query)) if (!drop.includes(name)) for (const value of values) parameters.append(name, value);
  const text = parameters.toString();
  return text ? `${url}?${text}` : url;
}

/** The contract's list envelope. */
export function listResponse(input: {
  results: ReadonlyArray<Record<string, unknown>>;
  pageSize: number;
  pageIndex: number;
  homeOrganizationId: string;
  resourceSpecific: Readonly<Partial<Record<string, string>>>;
  links: { self: string; next?: string };
}): ApiResponse {
  return {
    statusCode: 200,
    body: {
      number_results: input.results.length,
      search_criteria: {
        page_size: input.pageSize,
        page_index: input.pageIndex,
        home_organization_id: input.homeOrganizationId,
        resource_specific: input.resourceSpecific,
      },
      results: input.results,
      response: responseMember('Get Successful.'),
      links: input.links,
    },
  };
}
