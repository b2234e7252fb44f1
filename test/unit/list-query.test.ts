import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '#shared/domain/errors.ts';
import type { FilterSpecs } from '#shared/http/list-query.ts';
import { parseFilterExpression, parseListQuery } from '#shared/http/list-query.ts';

const SPECS: FilterSpecs = {
  type: { kind: 'enum', values: ['png', 'jpeg'] },
  resource: { kind: 'text', maxLength: 20 },
  start_received_date: { kind: 'date', bound: 'start' },
  end_received_date: { kind: 'date', bound: 'end' },
};

const q = (entries: Record<string, string | string[]>) => Object.fromEntries(Object.entries(entries).map(([name, value]) => [name, [value].flat()]));

function fields(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidRequest) return error.issues.map((issue) => issue.field);
    throw error;
  }
  throw new Error('expected InvalidRequest');
}

describe('filter expressions', () => {
  it('parses quoted and unquoted values, case-insensitive keywords and doubled quotes', () => {
    expect(parseFilterExpression("type eq png AND resource Eq 'o''brien x'")).toEqual([
      { name: 'type', value: 'png' },
      { name: 'resource', value: "o'brien x" },
    ]);
  });

  it('rejects malformed expressions', () => {
    for (const bad of ['', 'type', 'type eq', "type eq 'png", 'type ne png', 'type eq png or resource eq x', 'type eq png and', "type eq pn'g"]) {
      expect(() => parseFilterExpression(bad), bad).toThrow();
    }
  });
});

describe('list query', () => {
  it('defaults to page 0 of 50 and normalizes dates to yyyy-mm-ddThh:mm:ss', () => {
    const parsed = parseListQuery(q({ filter: "start_received_date eq '2024-05-01' and end_received_date eq 2024-05-31" }), SPECS);
    expect(parsed).toEqual({ pageSize: 50, pageIndex: 0, filters: { start_received_date: '2024-05-01T00:00:00', end_received_date: '2024-05-31T23:59:59' } });
    expect(parseListQuery(q({ start_received_date: '2024-05-01T10:11:12' }), SPECS).filters.start_received_date).toBe('2024-05-01T10:11:12');
  });

  it('accepts plain parameters and the expression together when names differ', () => {
    expect(parseListQuery(q({ type: 'PNG', filter: 'resource eq application', page_size: '1000', page_index: '3' }), SPECS)).toMatchObject({
      pageSize: 1000,
      pageIndex: 3,
      filters: { type: 'png', resource: 'application' },
    });
  });

  it('rejects unknown and repeated names, bad dates and out-of-range pages', () => {
    expect(fields(() => parseListQuery(q({ colour: 'red' }), SPECS))).toEqual(['colour']);
    expect(fields(() => parseListQuery(q({ type: 'png', filter: 'type eq jpeg' }), SPECS))).toEqual(['filter.type']);
    expect(fields(() => parseListQuery(q({ type: ['png', 'jpeg'] }), SPECS))).toEqual(['type']);
    expect(fields(() => parseListQuery(q({ filter: 'size eq 3' }), SPECS))).toEqual(['filter']);
    expect(fields(() => parseListQuery(q({ start_received_date: '2024-02-30' }), SPECS))).toEqual(['start_received_date']);
    expect(fields(() => parseListQuery(q({ page_size: '0', page_index: '-1' }), SPECS))).toEqual(['page_size', 'page_index']);
    expect(fields(() => parseListQuery(q({ page_size: '1001' }), SPECS))).toEqual(['page_size']);
  });
});
