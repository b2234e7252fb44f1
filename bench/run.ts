/**
 * npm run bench: the figures the README and closing notes quote, measured in
 * one run on this machine. Ratios against bare calls made in the same process
 * matter more than absolute numbers on a shared, noisy machine.
 */
import { bundleFigures, coldStart, emptyHandlerBundle, synthesizeBundles } from './bundles.ts';
import { routes } from '#shared/platform/routes.ts';
import type { RouteDefinition } from '#shared/platform/routes.ts';
import { recordRun } from './results.ts';
import { startRuntimeForBench } from './support.ts';

const started = await startRuntimeForBench();
console.log(`npm start -> first answered request: ${started.firstAnswerMs.toFixed(0)} ms`);

try {
  const cdkOut = synthesizeBundles();
  const figures = bundleFigures(cdkOut);
  const env = { ...started.runtime.handlerEnvironment, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  // Each route's function serves a request of its own route as the merchant (org_200): reads look records
  // up for real (a 404 for the made-up ids), writes answer the validation error of an empty body.
  const eventFor = (route: RouteDefinition | undefined) => {
    const parameters: Record<string, string> = { organization_id: 'org_200', location_id: 'loc_bench', customer_token: 'cst_bench', paymethod_token: 'mth_bench', document_id: 'doc_bench' };
    const resource = route?.path ?? '/v3/organizations/{organization_id}/paymethods';
    const path = resource.replace(/\{(\w+)\}/g, (_match, name: string) => parameters[name] ?? name);
    const pathParameters = Object.fromEntries([...resource.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name as string, parameters[name as string] as string]));
    const hasBody = route?.method === 'POST' || route?.method === 'PUT';
    return {
      httpMethod: route?.method ?? 'GET',
      path,
      resource,
      headers: { Host: 'localhost', 'X-Service-Auth-Organization-Id': 'org_200', ...(hasBody ? { 'Content-Type': 'application/json' } : {}) },
      multiValueHeaders: {},
      pathParameters,
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      body: hasBody ? '{}' : null,
      isBase64Encoded: false,
      requestContext: { requestId: 'bench', path, stage: 'local', authorizer: { credentialKind: 'secret', organizationId: 'org_200', accessId: 'merchant-id' } },
    };
  };
  const event = eventFor(undefined);
  const empty = coldStart(emptyHandlerBundle(), env, event);
  console.log(`\nempty handler: init ${empty.initMs.toFixed(1)} ms, first event ${empty.firstEventMs.toFixed(1)} ms`);
  console.log('\nfunction (non-route functions get the same list event and fail fast: their first-event time is not meaningful)');
  console.log('function                                   bundle KiB   gzip KiB   init ms   first event ms');
  const functions = figures.map((figure) => {
    const route = routes.find((candidate) => `${candidate.method} ${candidate.path}` === figure.description);
    const cold = coldStart(figure.bundle, env, eventFor(route));
    console.log(
      `${figure.functionName.padEnd(42)} ${(figure.bytes / 1024).toFixed(0).padStart(10)} ${(figure.gzipBytes / 1024).toFixed(0).padStart(10)} ${cold.initMs.toFixed(1).padStart(9)} ${cold.firstEventMs.toFixed(1).padStart(16)}`,
    );
    return { function: figure.functionName, bytes: figure.bytes, gzipBytes: figure.gzipBytes, initMs: round(cold.initMs), firstEventMs: round(cold.firstEventMs) };
  });
  recordRun('startup-and-bundles', {
    npmStartToFirstAnswerMs: Math.round(started.firstAnswerMs),
    emptyHandler: { initMs: round(empty.initMs), firstEventMs: round(empty.firstEventMs) },
    functions,
  });
} finally {
  await started.stop();
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
