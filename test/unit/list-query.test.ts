import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '#shared/domain/errors.ts';
import { listLinks, normalizeDate, parseFilterExpression, parseListQuery } from '#shared/http/list-query.ts';
import type { ListQuerySpec } from '#shared/http/list-query.ts';

const spec: ListQuerySpec<'start' | 'end' | 'kind' | 'name'> = {
  filters: {
    start: { kind: 'date', bound: 'start', range: 'r' },
    end: { kind: 'date', bound: 'end', range: 'r' },
    kind: { kind: 'enum', values: ['png', 'txt'] },
    name: { kind: 'string', maxLength: 5 },
  },
};

function issuesOf(action: () => unknown): Array<{ field: string; message: string }> {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequest);
    return [...(error as InvalidRequest).issues];
  }
  throw new Error('expected InvalidRequest');
}

describe('filter expressions', () => {
  it.each([
    ["kind eq 'png'", [{ name: 'kind', value: 'png' }]],
    ['kind eq png', [{ name: 'kind', value: 'png' }]],
    ["  kind EQ 'png'   AND name Eq 'O''Br'  ", [{ name: 'kind', value: 'png' }, { name: 'name', value: "O'Br" }]],
    ["name eq 'two words' and kind eq txt", [{ name: 'name', value: 'two words' }, { name: 'kind', value: 'txt' }]],
    ["name eq ''", [{ name: 'name', value: '' }]],
    ["name eq 'and eq'", [{ name: 'name', value: 'and eq' }]],
  ])('parses %j', (expression, terms) => {
    expect(parseFilterExpression(expression)).toEqual(terms);
  });

  it.each([
    ["kind eq 'png", /not closed/],
    ["kind eq 'a''", /not closed/],
    ["kind 'png'", /expected "eq"/],
    ['kind eq', /expected a value/],
    ["kind eq 'png' or name eq x", /expected "and"/],
    ["kind eq 'png'name eq x", /expected a space/],
    ["kind eq 'png' and", /expected a filter name/],
    ['', /expected a filter name/],
  ])('refuses %j', (expression, message) => {
    expect(() => parseFilterExpression(expression)).toThrow(message);
  });
});

describe('list query parameters', () => {
  it('merges plain parameters and the expression, normalizes values, defaults the page', () => {
    expect(parseListQuery({ kind: ['PNG'], filter: ["start eq '2024-01-31' and end eq 2024-02-29T10:00:00"] }, spec)).toEqual({
      filters: { kind: 'png', start: '2024-01-31T00:00:00', end: '2024-02-29T10:00:00' },
      pageSize: 50,
      pageIndex: 0,
    });
    expect(parseListQuery({ page_size: ['1000'], page_index: ['3'], cursor: ['abc_-1'] }, spec)).toEqual({ filters: {}, pageSize: 1000, pageIndex: 3, cursor: 'abc_-1' });
    // A page past the end is an empty page, not a 400, up to the nine digits page boundaries order by.
    expect(parseListQuery({ page_index: ['1000001'] }, spec).pageIndex).toBe(1_000_001);
    expect(parseListQuery({ page_index: ['999999999'] }, spec).pageIndex).toBe(999_999_999);
    expect(issuesOf(() => parseListQuery({ page_index: ['1000000000'] }, spec))[0]?.field).toBe('page_index');
  });

  it('collects every problem', () => {
    const issues = issuesOf(() =>
      parseListQuery({ kind: ['png'], filter: ["kind eq txt and color eq red and start eq '2023-02-29'"], page_size: ['0'], sort: ['x'], name: ['a', 'b'] }, spec),
    );
    expect(issues.map((issue) => issue.field).sort()).toEqual(['filter', 'kind', 'name', 'page_size', 'sort', 'start'].sort());
  });

  it('refuses an end before the start, a name too long and a cursor with foreign characters', () => {
    expect(issuesOf(() => parseListQuery({ start: ['2024-02-02'], end: ['2024-02-01'] }, spec))).toEqual([{ field: 'end', message: 'must not be before start' }]);
    expect(issuesOf(() => parseListQuery({ name: ['abcdef'] }, spec))[0]?.field).toBe('name');
    expect(issuesOf(() => parseListQuery({ cursor: ['a+b'] }, spec))[0]?.field).toBe('cursor');
  });

  it('normalizes dates against the calendar', () => {
    expect(normalizeDate('2024-02-29', 'start')).toBe('2024-02-29T00:00:00');
    expect(normalizeDate('2024-02-29', 'end')).toBe('2024-02-29T23:59:59');
    for (const bad of ['2023-02-29', '2024-13-01', '2024-01-01T24:00:00', '2024-1-01', '2024-01-01 10:00:00', '2024-01-01T10:00:00Z']) {
      expect(normalizeDate(bad, 'start'), bad).toBeUndefined();
    }
  });

  it('builds self and next links that keep the filters', () => {
    const links = listLinks('https://api.example/v3/organizations/org_1/documents', { filter: ["kind eq 'png'"], page_size: ['2'], page_index: ['0'] }, { pageIndex: 1, cursor: 'c1' });
    expect(links.self).toBe('https://api.example/v3/organizations/org_1/documents?filter=kind+eq+%27png%27&page_size=2&page_index=0');
    expect(links.next).toBe('https://api.example/v3/organizations/org_1/documents?filter=kind+eq+%27png%27&page_size=2&page_index=1&cursor=c1');
  });
});
