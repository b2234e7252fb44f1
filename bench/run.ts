/**
 * npm run bench: the figures the README and closing notes quote, measured in
 * one run on this machine. Ratios against bare calls made in the same process
 * matter more than absolute numbers on a shared, noisy machine.
 */
import { bundleFigures, coldStart, emptyHandlerBundle, synthesizeBundles } from './bundles.ts';
import { startRuntimeForBench } from './support.ts';

const started = await startRuntimeForBench();
console.log(`npm start -> first answered request: ${started.firstAnswerMs.toFixed(0)} ms`);

try {
  const cdkOut = synthesizeBundles();
  const figures = bundleFigures(cdkOut);
  const env = { ...started.runtime.handlerEnvironment, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const event = {
    httpMethod: 'GET',
    path: '/v3/organizations/org_200/paymethods',
    resource: '/v3/organizations/{organization_id}/paymethods',
    headers: { Host: 'localhost' },
    multiValueHeaders: {},
    pathParameters: { organization_id: 'org_200' },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: 'bench', path: '/v3/organizations/org_200/paymethods', stage: 'local', authorizer: { organizationId: 'org_200', accessId: 'merchant-id' } },
  };
  const empty = coldStart(emptyHandlerBundle(), env, event);
  console.log(`\nempty handler: init ${empty.initMs.toFixed(1)} ms, first event ${empty.firstEventMs.toFixed(1)} ms`);
  console.log('\nfunction                                   bundle KiB   gzip KiB   init ms   first event ms');
  for (const figure of figures) {
    const cold = coldStart(figure.bundle, env, event);
    console.log(
      `${figure.functionName.padEnd(42)} ${(figure.bytes / 1024).toFixed(0).padStart(10)} ${(figure.gzipBytes / 1024).toFixed(0).padStart(10)} ${cold.initMs.toFixed(1).padStart(9)} ${cold.firstEventMs.toFixed(1).padStart(16)}`,
    );
  }
} finally {
  await started.stop();
}
