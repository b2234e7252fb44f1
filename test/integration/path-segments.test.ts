import { describe, expect, it } from 'vitest';
import type { PathParameterName, RouteDefinition } from '#shared/platform/routes.ts';
import { PATH_PARAMETERS, routes } from '#shared/platform/routes.ts';
import { MERCHANT, call } from '../support/api.ts';
import { unique } from '../support/paymethods.ts';

/**
 * Every route of the route table, through the local runtime (API Gateway
 * emulator, authorizer, handler), with one path segment at a time made
 * over-long or malformed: each is 404 NOT_FOUND in the envelope, a list route
 * as much as a create. Before, a 27-character customer token listed an empty
 * page (200) and was 404 on create.
 */
const parameterNames = (route: RouteDefinition) => [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as PathParameterName);

/** A value of the parameter's kind that the route could serve: the merchant's organization, fresh ids elsewhere. */
function validValue(name: PathParameterName): string {
  return name === 'organization_id' ? MERCHANT.organizationId : unique(PATH_PARAMETERS[name].prefix);
}

function pathWith(route: RouteDefinition, values: Partial<Record<PathParameterName, string>>): string {
  return route.path.replace(/\{(\w+)\}/g, (_match, name: PathParameterName) => values[name] ?? validValue(name));
}

const sendsBody = (route: RouteDefinition) => route.method === 'POST' || route.method === 'PUT';

async function answerFor(route: RouteDefinition, path: string) {
  return call(path, { method: route.method, ...(sendsBody(route) ? { body: {} } : {}) });
}

describe('path segments', () => {
  const cases = routes.flatMap((route) =>
    parameterNames(route).flatMap((name) => {
      const { prefix, maxLength } = PATH_PARAMETERS[name];
      return [
        { route, name, kind: 'one character too long', value: prefix + 'a'.repeat(maxLength - prefix.length + 1) },
        { route, name, kind: 'without its prefix', value: 'x'.repeat(maxLength - 1) },
        { route, name, kind: 'with a character no id has', value: `${prefix}a.b` },
      ];
    }),
  );

  it('the route table has path parameters to check, each with a spec', () => {
    expect(cases.length).toBeGreaterThan(30);
    for (const route of routes) for (const name of parameterNames(route)) expect(Object.hasOwn(PATH_PARAMETERS, name), `${route.handler}: ${name}`).toBe(true);
  });

  it('an over-long or malformed segment in any position of any route is 404 NOT_FOUND', async () => {
    const failures: string[] = [];
    for (const { route, name, kind, value } of cases) {
      const answer = await answerFor(route, pathWith(route, { [name]: value }));
      const code = (answer.body as { response?: { response_code?: string } } | undefined)?.response?.response_code;
      if (answer.status !== 404 || code !== 'NOT_FOUND') failures.push(`${route.method} ${route.path}, ${name} ${kind}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('a customer token of exactly 26 characters still lists (200), one of 27 is 404 on list and create alike', async () => {
    const listRoute = routes.find((route) => route.handler === 'paymethods-list-customer')!;
    const createRoute = routes.find((route) => route.handler === 'paymethods-create-customer')!;
    const longest = `cst_${'b'.repeat(22)}`;
    const tooLong = `${longest}c`;
    const list = await answerFor(listRoute, pathWith(listRoute, { location_id: 'loc_edge', customer_token: longest }));
    expect(list.status, list.text).toBe(200);
    expect((await answerFor(listRoute, pathWith(listRoute, { location_id: 'loc_edge', customer_token: tooLong }))).status).toBe(404);
    expect((await answerFor(createRoute, pathWith(createRoute, { location_id: 'loc_edge', customer_token: tooLong }))).status).toBe(404);
  });
});
