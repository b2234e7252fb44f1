/* global module */
/**
 * The layer rules the build enforces (`npm run lint:deps`, part of `npm test`).
 * docs/architecture.md explains the layers; each rule says why it exists.
 * Type-only imports count: a domain type that names an SDK type is a leak too.
 */
const DOMAIN = '^shared/domain/';
const ADAPTERS = '^shared/(store|aws)/';
const OUTER = '^(functions|infra|local|scripts|client|test|bench)/';
const AWS_RUNTIME_PACKAGES = 'node_modules/(@aws-sdk|@smithy|@types/aws-lambda|aws-lambda|@middy|@aws-lambda-powertools|busboy)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycle anywhere: a cycle means two modules are one module, or one is in the wrong layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-knows-no-aws-or-http',
      severity: 'error',
      comment: 'The domain (use cases, rules, ports) knows nothing of the AWS SDK, Lambda, middy or HTTP.',
      from: { path: DOMAIN },
      to: { path: AWS_RUNTIME_PACKAGES },
    },
    {
      name: 'domain-knows-no-outer-layer',
      severity: 'error',
      comment:
        'The domain imports only the domain and, from the platform manifest, the names code and policies agree on and the catalogue ' +
        'of response codes its errors name: adapters, HTTP, wiring, the function runtime, logging and the rest of the manifest depend on it, never the reverse.',
      from: { path: DOMAIN },
      to: { path: ['^shared/(http|store|aws|wiring|runtime|log|observability|tokenization)/', '^shared/platform/'], pathNot: '^shared/platform/(names|response-codes)\\.ts$' },
    },
    {
      name: 'response-codes-import-nothing',
      severity: 'error',
      comment: 'The catalogue of response codes is read by every layer (domain, HTTP, stack, local runtime, docs): it depends on none.',
      from: { path: '^shared/platform/response-codes\\.ts$' },
      to: { path: '^(shared|functions|infra|local|scripts|client|test|bench|node_modules)/', pathNot: '^shared/platform/response-codes\\.ts$' },
    },
    {
      name: 'platform-manifest-imports-only-itself',
      severity: 'error',
      comment:
        'shared/platform is what a function is (route, access, grants, environment, sizing, triggers, item kinds, names, table shape): ' +
        'the stack, the local runtime and the handlers all read it, so it imports nothing but itself and no package.',
      from: { path: '^shared/platform/' },
      to: { path: ['^(functions|infra|local|scripts|client|test|bench|node_modules)/', '^shared/(?!platform/)'] },
    },
    {
      name: 'adapters-know-no-http-or-wiring',
      severity: 'error',
      comment: 'Repositories and AWS adapters implement domain ports; they are built by shared/wiring and never see a request.',
      from: { path: ADAPTERS },
      to: { path: '^shared/(http|wiring)/' },
    },
    {
      name: 'repositories-are-not-aws-adapters',
      severity: 'error',
      comment: 'shared/store (DynamoDB repositories) and shared/aws (KMS, S3, PayPal adapters) are siblings: neither builds the other.',
      from: { path: '^shared/store/' },
      to: { path: '^shared/aws/' },
    },
    {
      name: 'http-builds-no-adapters',
      severity: 'error',
      comment: 'The HTTP layer gets its adapters from shared/wiring, the one place they are built.',
      from: { path: '^shared/http/' },
      to: { path: ADAPTERS },
    },
    {
      name: 'wiring-knows-no-http',
      severity: 'error',
      comment: 'Composition roots build adapters for use cases; they know nothing of requests.',
      from: { path: '^shared/wiring/' },
      to: { path: '^shared/http/' },
    },
    {
      name: 'shared-knows-no-outer-layer',
      severity: 'error',
      comment: 'shared/ is what handlers, the stack and the local runtime are built from; it never imports them (or tests).',
      from: { path: '^shared/' },
      to: { path: OUTER },
    },
    {
      name: 'handlers-are-wiring',
      severity: 'error',
      comment: 'Handlers run in Lambda: no CDK, no local runtime, no scripts or tests; repositories and AWS adapters come from shared/wiring.',
      from: { path: '^functions/' },
      to: { path: [OUTER, ADAPTERS] },
    },
    {
      name: 'infra-loads-no-runtime-code',
      severity: 'error',
      comment:
        'The CDK app reads the platform manifest (shared/platform) and the HTTP edge\'s shapes (envelopes, gateway responses, ' +
        'the OpenAPI document), never handler code, adapters, the domain, the function runtime, the SDK or the local runtime.',
      from: { path: '^infra/' },
      to: { path: ['^(functions|local|scripts|test|bench)/', '^shared/(aws|wiring|domain|store|runtime)/', 'node_modules/@aws-sdk/'] },
    },
    {
      name: 'local-runtime-is-not-deployed-code',
      severity: 'error',
      comment: 'The local runtime imitates AWS; handlers reach it only through the environment, and it never imports the stack or tests.',
      from: { path: '^local/' },
      to: { path: '^(functions|infra|scripts|test|bench)/' },
    },
    {
      name: 'production-code-imports-no-tests',
      severity: 'error',
      from: { path: '^(scripts|client)/' },
      to: { path: '^(functions|infra|test|bench)/' },
    },
    {
      name: 'scans-only-in-operator-scripts',
      severity: 'error',
      comment:
        'Every list a request makes is a Query. The two walks of the whole table (the fingerprint backfill and the ' +
        'list-index migration) Scan: no handler and nothing the local runtime runs may reach them, only the operator scripts and tests.',
      from: { path: '^(functions|local)/' },
      to: { path: '^shared/store/(fingerprint-backfill|list-index-migration)\\.ts$', reachable: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'Every import resolves (the #shared/* aliases included), so no rule above is silently skipped.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
