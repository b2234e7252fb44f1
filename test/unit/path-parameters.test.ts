import { describe, expect, it } from 'vitest';
import type { PathParameterName } from '#shared/platform/routes.ts';
import { PATH_PARAMETERS, routes } from '#shared/platform/routes.ts';
import { isPathParameter } from '#shared/http/request.ts';

describe('path parameters', () => {
  const names = Object.keys(PATH_PARAMETERS) as PathParameterName[];

  it.each(names)('%s: its prefix and one character up to its length is a value; one more character, no prefix or a bare prefix is not', (name) => {
    const { prefix, maxLength } = PATH_PARAMETERS[name];
    expect(isPathParameter(name, `${prefix}a`)).toBe(true);
    expect(isPathParameter(name, prefix + 'a'.repeat(maxLength - prefix.length))).toBe(true);
    expect(isPathParameter(name, prefix + 'a'.repeat(maxLength - prefix.length + 1))).toBe(false);
    expect(isPathParameter(name, prefix)).toBe(false);
    expect(isPathParameter(name, `x${prefix}a`)).toBe(false);
    expect(isPathParameter(name, `${prefix}a/b`)).toBe(false);
    expect(isPathParameter(name, `${prefix}a%20`)).toBe(false);
  });

  it('tokens are 26 characters at most, as the contract fixes them', () => {
    for (const name of ['customer_token', 'paymethod_token', 'document_id', 'one_time_token'] as const) expect(PATH_PARAMETERS[name].maxLength).toBe(26);
  });

  it('a name the route table does not declare names nothing', () => {
    expect(isPathParameter('toString', 'toString')).toBe(false);
    expect(isPathParameter('__proto__', 'org_1')).toBe(false);
  });

  it('every parameter of every route has a spec', () => {
    for (const route of routes) {
      for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) expect(Object.hasOwn(PATH_PARAMETERS, name!), `${route.handler}: ${name}`).toBe(true);
    }
  });
});

describe('path parameters repeated in a body', () => {
  const path = { organization_id: 'org_1', location_id: 'loc_2', customer_token: 'cst_3' };

  it('are dropped when equal to the path, with or without their prefix; the rest of the body is kept as it is', async () => {
    const { withoutPathEchoes } = await import('#shared/http/request.ts');
    expect(withoutPathEchoes({ organization_id: '1', location_id: 'loc_2', customer_token: 'cst_3', label: 'x' }, path)).toEqual({ label: 'x' });
    const body = { label: 'x' };
    expect(withoutPathEchoes(body, path)).toBe(body);
    // A member the path does not carry is the body's own (the locationless create's organization_id).
    expect(withoutPathEchoes({ organization_id: 'org_9', card: {} }, { customer_token: 'cst_3' })).toEqual({ organization_id: 'org_9', card: {} });
    expect(withoutPathEchoes({ location_id: null }, path)).toEqual({ location_id: null });
    expect(withoutPathEchoes([1], path)).toEqual([1]);
  });

  it('are 400 naming every one that differs, never echoing the client\'s value', async () => {
    const { withoutPathEchoes } = await import('#shared/http/request.ts');
    const { InvalidRequest } = await import('#shared/domain/errors.ts');
    let error: unknown;
    try {
      withoutPathEchoes({ organization_id: 'org_2', location_id: 2, customer_token: 'cst_3<script>' }, path);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidRequest);
    const issues = (error as InstanceType<typeof InvalidRequest>).issues;
    expect(issues.map((issue) => issue.field)).toEqual(['organization_id', 'location_id', 'customer_token']);
    expect(JSON.stringify(issues)).not.toContain('script');
    expect(issues[1]!.message).toBe("must be the path's location_id, loc_2, when the body repeats it (with or without its prefix)");
  });
});
