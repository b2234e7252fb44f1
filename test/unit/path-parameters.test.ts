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
