import { API_FUNCTION_TIMEOUT_SECONDS } from '#shared/platform/function-sizing.ts';
import { WEBHOOK_QUEUE_GRANTS, WEBHOOK_QUEUE_TRIGGERS } from '#shared/platform/webhooks.ts';
import { eventRuleTriggers, streamTriggers } from '#shared/platform/triggers.ts';
import { GLOBAL_SECONDARY_INDEXES } from '#shared/platform/table.ts';
import { ITEM_PARTITION_PREFIXES } from '#shared/platform/item-kinds.ts';
import { accessFor } from '#shared/platform/function-environment.ts';
import { Match } from 'aws-cdk-lib/assertions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Template } from 'aws-cdk-lib/assertions';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelope } from '#shared/http/envelope.ts';
import { GATEWAY_RESPONSES } from '#shared/http/gateway-responses.ts';
import { routes } from '#shared/platform/routes.ts';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#shared/platform/names.ts';
import { grantKeyUsage } from '#infra/keys.ts';
import type { PaymentsApiStack } from '#infra/stack.ts';
import { fixtureRoutes } from './fixtures/routes.ts';
import {
  actionsOf,
  bucketId,
  environmentOf,
  findMethod,
  integrationFunctionId,
  keyGrantsTheKeyIgnores,
  keyIdByDescription,
  paymethodTableRef,
  refTo,
  resourceIdsByPath,
  resourcesOfType,
  roleIdOf,
  leadingKeysOf,
  roleStatements,
  settings,
  synthesize,
} from './template-helpers.ts';

const functionsDir = fileURLToPath(new URL('./fixtures/functions', import.meta.url));
const SYNTH_TIMEOUT_MS = 60_000;

const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
/** Lambda active tracing. */
const XRAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
/** Check, chunk, merge and export: test/infra/account-updater.test.ts covers them. */
const ACCOUNT_UPDATER_FUNCTIONS = 4;
const isAccountUpdaterFunction = (id: string) => id.startsWith('AccountUpdater');
const READ = ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'];
const WRITE = [...READ, 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];
const TABLE_WRITES = ['dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'];

/** Written out by hand: the test must not derive grants the way the stack does. */
/** GenerateMac on the request-hash key: the keyed hash of the requests whose Idempotency-Key records a route writes. */
const REQUEST_HASH = 'kms:GenerateMac';
const EXPECTED_ACTIONS: Record<string, string[]> = {
  'paymethods-list': READ,
  'paymethods-create': [...WRITE, 'kms:GenerateDataKey', REQUEST_HASH],
  'paymethods-get': READ,
  'paymethods-update': [...WRITE, 'kms:GenerateDataKey'],
  'paymethods-delete': WRITE,
  'paymethods-charge': [...READ, 'kms:Decrypt'],
  'documents-create': [...WRITE, 's3:PutObject', 'kms:GenerateDataKey', REQUEST_HASH],
  'documents-upload-create': [...WRITE, 's3:PutObject', 'kms:GenerateDataKey', REQUEST_HASH],
  'documents-file': [...READ, 's3:GetObject', 'kms:Decrypt'],
  'documents-delete': [...WRITE, 's3:DeleteObject'],
  // Declares nothing, but a secret route reads organizations for its tenancy check.
  'organizations-ping': READ,
  status: [],
};

const RETRY_AFTER = expect.stringMatching(/^'\d+'$/);
// Every gateway response names API Gateway's request id, as every function answer does.
const ENVELOPE_HEADERS = { 'gatewayresponse.header.Content-Type': "'application/json'", 'gatewayresponse.header.X-Request-Id': 'context.requestId' };

function envelope(environment: string, code: string) {
  return {
    response: {
      environment,
      response_code: code,
      response_desc: expect.stringMatching(/^Error\[1\]: \S/),
      errors: [{ message: expect.any(String) }],
    },
  };
}

const vaultKeyId = (template: Template) => keyIdByDescription(template, 'account-number data keys');
const macKeyId = (template: Template) => keyIdByDescription(template, 'secure keys');
const topicKeyId = (template: Template) => keyIdByDescription(template, 'alarm topic');
const fingerprintKeyId = (template: Template) => keyIdByDescription(template, 'paymethod fingerprint key');
const requestHashKeyId = (template: Template) => keyIdByDescription(template, 'Idempotency-Key requests');

function routeFunctionId(template: Template, route: { path: string; method: string }): string {
  return integrationFunctionId(template, findMethod(template, route.path, route.method)!);
}

describe('PaymentsApiStack (fixture routes, dev)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('dev'), { routes: fixtureRoutes, functionsDir });
  }, SYNTH_TIMEOUT_MS);

  it('has one single-table design table with the shared GSIs, PITR and TTL, billed per request', () => {
    // The local runtime creates its table from the same list.
    const gsis = GLOBAL_SECONDARY_INDEXES.map((index) => ({
      IndexName: index.indexName,
      KeySchema: [{ AttributeName: index.partitionKey, KeyType: 'HASH' }, { AttributeName: index.sortKey, KeyType: 'RANGE' }],
      Projection: index.projection === 'ALL' ? { ProjectionType: 'ALL' } : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection] },
    }));
    // The paymethod list indexes carry keys and immutable members only (docs/data-model.md, "Paymethod lists").
    // So do the report, customer_id and fingerprint indexes: keys, the token and what their lists filter on.
    expect(gsis.filter((index) => index.Projection.ProjectionType === 'INCLUDE').map((index) => index.IndexName)).toEqual(['gsi8', 'gsi9', 'gsi10', 'gsi11', 'gsi12', 'gsi13']);
    // The paymethod table, the Account Updater's history table and the webhook deliveries table (below).
    template.resourceCountIs('AWS::DynamoDB::Table', 3);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: {
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: gsis,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expires_at', Enabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: false,
        // Both images of every write: the domain event publisher reads them (test/infra/domain-events.test.ts).
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      },
    });
  });

  it('has a rotating vault key, non-rotating HMAC keys for credentials, fingerprints and request hashes, and a rotating alarm topic key', () => {
    // Plus the Account Updater's reports and state machine keys (test/infra/account-updater.test.ts).
    template.resourceCountIs('AWS::KMS::Key', 7);
    const hmacKeys = Object.values(resourcesOfType(template, 'AWS::KMS::Key')).filter((key) => key.Properties?.KeySpec === 'HMAC_256');
    const descriptions = hmacKeys.map((key) => String(key.Properties?.Description));
    expect(descriptions).toHaveLength(3);
    expect(descriptions.some((description) => description.includes('keyed hash of API secure keys'))).toBe(true);
    expect(descriptions.some((description) => description.includes('paymethod fingerprint key'))).toBe(true);
    expect(descriptions.some((description) => description.includes('keyed hash of Idempotency-Key requests'))).toBe(true);
    for (const id of [vaultKeyId(template), topicKeyId(template)]) {
      expect(resourcesOfType(template, 'AWS::KMS::Key')[id]!.Properties).toMatchObject({ EnableKeyRotation: true });
    }
    for (const key of hmacKeys) expect(key.Properties).toMatchObject({ KeyUsage: 'GENERATE_VERIFY_MAC', EnableKeyRotation: false });
  });

  it("backs in each scoped key's policy every KMS action the IAM policies let a role use on it, under the same conditions: KMS ignores an IAM grant the key policy does not back", () => {
    expect(keyGrantsTheKeyIgnores(template)).toEqual([]);
  });

  it('finds an IAM grant that the key policy backs only for other actions, or only under narrower conditions', () => {
    const functionFor = (stack: PaymentsApiStack, handler: string) => stack.api.routeFunctions.find(({ route }) => route.handler === handler)!.fn;
    const vaultKey = keyIdByDescription(template, 'account-number data keys');
    const extended = synthesize(settings('dev'), { routes: fixtureRoutes, functionsDir }, (stack) => {
      // The key policy names this role, for GenerateDataKey alone; CDK's own grant writes only the IAM policy.
      stack.vaultKey.grantDecrypt(functionFor(stack, 'paymethods-create'));
      // Decrypt in both policies under the vault's encryption context, and in the IAM policy alone without it.
      const fn = functionFor(stack, 'paymethods-delete');
      grantKeyUsage(stack.vaultKey, fn, ['kms:Decrypt'], { StringEquals: { 'kms:EncryptionContext:purpose': 'paymethod-vault' } });
      fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [stack.vaultKey.keyArn] }));
    });
    const roleOf = (handler: string) => {
      const route = fixtureRoutes.find((candidate) => candidate.handler === handler)!;
      return roleIdOf(extended, integrationFunctionId(extended, findMethod(extended, route.path, route.method)!));
    };
    expect(keyGrantsTheKeyIgnores(extended).sort()).toEqual([`${roleOf('paymethods-create')} -> ${vaultKey}: kms:Decrypt`, `${roleOf('paymethods-delete')} -> ${vaultKey}: kms:Decrypt`].sort());
  }, SYNTH_TIMEOUT_MS);

  it('keeps documents private, versioned, SSE-KMS with the vault key and TLS-only', () => {
    expect(resourcesOfType(template, 'AWS::S3::Bucket')[bucketId(template, 'documents')]!.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { 'Fn::GetAtt': [vaultKeyId(template), 'Arn'] } },
        }],
      },
      VersioningConfiguration: { Status: 'Enabled' },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({
          Effect: 'Deny',
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        })]),
      },
    });
    // A write that names another encryption, or another key, is refused; one that names none gets the default.
    const policy = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).find((candidate) => JSON.stringify(candidate.Properties.Bucket) === JSON.stringify({ Ref: bucketId(template, 'documents') }))!;
    const denies = (policy.Properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement.filter((statement) => statement.Action === 's3:PutObject');
    expect(denies).toEqual([
      expect.objectContaining({ Effect: 'Deny', Principal: { AWS: '*' }, Condition: { StringNotEqualsIfExists: { 's3:x-amz-server-side-encryption': 'aws:kms' } } }),
      expect.objectContaining({ Effect: 'Deny', Principal: { AWS: '*' }, Condition: { StringNotEqualsIfExists: { 's3:x-amz-server-side-encryption-aws-kms-key-id': { 'Fn::GetAtt': [vaultKeyId(template), 'Arn'] } } } }),
    ]);
  });

  it('gives every fixture route its method on its path, behind the authorizer unless public', () => {
    const authorizer = refTo(template, 'AWS::ApiGateway::Authorizer');
    for (const route of fixtureRoutes) {
      const method = findMethod(template, route.path, route.method);
      expect(method, `${route.method} ${route.path}`).toBeDefined();
      expect(method).toMatchObject({ Integration: { Type: 'AWS_PROXY', IntegrationHttpMethod: 'POST' } });
      if (route.auth === 'secret') {
        expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: authorizer });
      } else {
        expect(method).toMatchObject({ AuthorizationType: 'NONE' });
        expect(method!.AuthorizerId).toBeUndefined();
      }
    }
  });

  it('shares resources between routes and creates one function per route', () => {
    const paths = [...resourceIdsByPath(template).keys()];
    expect(paths.filter((path) => path === '/v3/organizations/{organization_id}/paymethods/{paymethod_token}')).toHaveLength(1);
    // Plus the authorizer, the upload finalizer, CDK's bucket-notification custom resource (one per stack with a notified bucket: the
    // documents bucket's in the parent, the reports bucket's in the Account Updater's), the Account Updater's four, the event publisher,
    // the scan-result handler, and the webhook fan-out and sender.
    template.resourceCountIs('AWS::Lambda::Function', fixtureRoutes.length + 4 + ACCOUNT_UPDATER_FUNCTIONS + streamTriggers.length + eventRuleTriggers.length + WEBHOOK_QUEUE_TRIGGERS.length);
    const functionIds = new Set(fixtureRoutes.map((route) => routeFunctionId(template, route)));
    expect(functionIds.size).toBe(fixtureRoutes.length);
  });

  it('answers other methods on a known path with 405, the envelope and Allow', () => {
    const allowed = new Map<string, string[]>();
    for (const route of fixtureRoutes) allowed.set(route.path, [...(allowed.get(route.path) ?? []), route.method]);
    expect(allowed.get('/v3/organizations/{organization_id}/paymethods/{paymethod_token}')).toEqual(['GET', 'PUT', 'DELETE']);

    for (const [path, methods] of allowed) {
      const method = findMethod(template, path, 'ANY');
      expect(method, `ANY ${path}`).toMatchObject({
        AuthorizationType: 'NONE',
        Integration: {
          Type: 'MOCK',
          IntegrationResponses: [{
            StatusCode: '405',
            ResponseParameters: {
              'method.response.header.Allow': `'${methods.join(', ')}'`,
              'method.response.header.Content-Type': "'application/json'",
              'method.response.header.X-Request-Id': 'context.requestId',
            },
          }],
        },
        MethodResponses: [{ StatusCode: '405' }],
      });
      const [response] = (method!.Integration as { IntegrationResponses: { ResponseTemplates: Record<string, string> }[] }).IntegrationResponses;
      expect(JSON.parse(response!.ResponseTemplates['application/json']!)).toMatchObject(envelope('sandbox', 'METHOD_NOT_ALLOWED'));
    }
  });

  it('leaves paths without routes to the 404 gateway response, and answers 404 at the root', () => {
    expect(findMethod(template, '/v3', 'ANY')).toBeUndefined();
    expect(findMethod(template, '/v3/organizations/{organization_id}', 'ANY')).toBeUndefined();
    expect(findMethod(template, '/', 'ANY')).toMatchObject({
      AuthorizationType: 'NONE',
      Integration: { Type: 'MOCK', IntegrationResponses: [{ StatusCode: '404' }] },
    });
  });

  it.each([
    ['UNAUTHORIZED', '401', 'UNAUTHORIZED', { 'gatewayresponse.header.WWW-Authenticate': `'Basic realm="payments"'` }],
    ['ACCESS_DENIED', '403', 'FORBIDDEN', {}],
    ['MISSING_AUTHENTICATION_TOKEN', '404', 'NOT_FOUND', {}],
    ['RESOURCE_NOT_FOUND', '404', 'NOT_FOUND', {}],
    ['REQUEST_TOO_LARGE', '413', 'PAYLOAD_TOO_LARGE', {}],
    ['UNSUPPORTED_MEDIA_TYPE', '415', 'UNSUPPORTED_MEDIA_TYPE', {}],
    ['BAD_REQUEST_BODY', '400', 'INVALID_REQUEST', {}],
    ['THROTTLED', '429', 'THROTTLED', { 'gatewayresponse.header.Retry-After': RETRY_AFTER }],
    ['INTEGRATION_TIMEOUT', '503', 'SERVICE_UNAVAILABLE', { 'gatewayresponse.header.Retry-After': RETRY_AFTER }],
    ['INTEGRATION_FAILURE', '503', 'SERVICE_UNAVAILABLE', { 'gatewayresponse.header.Retry-After': RETRY_AFTER }],
    ['AUTHORIZER_FAILURE', '503', 'SERVICE_UNAVAILABLE', { 'gatewayresponse.header.Retry-After': RETRY_AFTER }],
    ['AUTHORIZER_CONFIGURATION_ERROR', '503', 'SERVICE_UNAVAILABLE', { 'gatewayresponse.header.Retry-After': RETRY_AFTER }],
    ['DEFAULT_4XX', '400', 'INVALID_REQUEST', {}],
    ['DEFAULT_5XX', '500', 'INTERNAL_ERROR', {}],
  ] as const)('shapes the %s gateway response as %s %s', (type, status, code, headers) => {
    const matches = Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse'))
      .filter((response) => response.Properties.ResponseType === type);
    expect(matches).toHaveLength(1);
    const { StatusCode, ResponseParameters, ResponseTemplates } = matches[0]!.Properties as {
      StatusCode?: string; ResponseParameters: Record<string, string>; ResponseTemplates: Record<string, string>;
    };
    expect(StatusCode).toBe(status);
    expect(ResponseParameters).toEqual({ ...ENVELOPE_HEADERS, ...headers });
    expect(JSON.parse(ResponseTemplates['application/json']!)).toEqual(envelope('sandbox', code));
  });

  it('answers with the very bodies the local emulator sends, bar the environment', () => {
    const responses = Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse'));
    expect(responses).toHaveLength(Object.keys(GATEWAY_RESPONSES).length);
    for (const [kind, spec] of Object.entries(GATEWAY_RESPONSES)) {
      const response = responses.find((candidate) => candidate.Properties.ResponseType === kind);
      const body = JSON.parse((response!.Properties.ResponseTemplates as Record<string, string>)['application/json']!);
      const local = errorEnvelope(spec.code, spec.message);
      expect(body, kind).toEqual({ response: { ...local.response, environment: 'sandbox' } });
    }
  });

  it('runs every function on Node.js 24, arm64, 512 MB, the API timeout, no source maps loaded at runtime, its own log group', () => {
    const logGroups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    for (const [id, fn] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).filter(([id]) => !isAccountUpdaterFunction(id))) {
      if (id.startsWith('BucketNotificationsHandler')) continue; // CDK's own custom resource
      if (id.startsWith('DomainEvents')) continue; // 256 MB, 60 s: test/infra/domain-events.test.ts
      if (id.startsWith('EventRuleTriggers')) continue; // sized in shared/platform/triggers.ts: test/unit/function-sizing.test.ts
      if (id.startsWith('WebhookDelivery')) continue; // 256 MB, 60 s: test/infra/webhooks.test.ts
      const finalizer = id.includes('DocumentsFinalize');
      expect(fn.Properties, id).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: 512,
        Timeout: finalizer ? 60 : API_FUNCTION_TIMEOUT_SECONDS,
        Environment: { Variables: { ENVIRONMENT_NAME: 'sandbox' } },
      });
      // --enable-source-maps costs every cold start; maps are applied offline (npm run symbolicate).
      expect((fn.Properties.Environment as { Variables: Record<string, string> }).Variables.NODE_OPTIONS, id).toBeUndefined();
      const { Ref: logGroupId } = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup;
      expect(logGroups[logGroupId]?.Properties.RetentionInDays, id).toBe(14);
    }
  });

  it('logs CDK\'s deploy-time bucket-notifications function to a log group of the stack\'s, with the same retention', () => {
    const logGroups = resourcesOfType(template, 'AWS::Logs::LogGroup');
    // One per stack with a notified bucket: the parent's (documents) and the Account Updater's (reports).
    const handlers = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).filter(([id]) => id.startsWith('BucketNotificationsHandler'));
    expect(handlers).toHaveLength(2);
    for (const [id, fn] of handlers) {
      const { Ref: logGroupId } = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup;
      expect(logGroups[logGroupId]?.Properties.RetentionInDays, id).toBe(14);
    }
  });

  it('sets only the environment variables each route needs', () => {
    const table = paymethodTableRef(template);
    for (const route of fixtureRoutes) {
      const variables = environmentOf(template, routeFunctionId(template, route));
      // A public route without table access (the fixture's status route) gets no table name.
      expect(variables.TABLE_NAME, route.handler).toEqual(accessFor(route).table ? table : undefined);
      expect('DOCUMENTS_BUCKET' in variables, route.handler).toBe(Boolean(route.access.documents));
      expect('VAULT_KEY_ID' in variables, route.handler).toBe(Boolean(route.access.vault));
      expect(variables.REQUEST_HASH_KEY_ID, route.handler).toEqual(route.access.writes?.includes('idempotency') ? { 'Fn::GetAtt': [requestHashKeyId(template), 'Arn'] } : undefined);
      expect('FINGERPRINT_KEY_ID' in variables, route.handler).toBe(false);
    }
  });

  it('passes the route-table-driven policy check the real route table gets', () => {
    assertLeastPrivilege(template, fixtureRoutes);
  });

  it('grants each route function exactly the actions its access declares', () => {
    expect(Object.keys(EXPECTED_ACTIONS).sort()).toEqual(fixtureRoutes.map((route) => route.handler).sort());
    for (const route of fixtureRoutes) {
      const actions = actionsOf(roleStatements(template, routeFunctionId(template, route)));
      expect(actions, route.handler).toEqual([...LOGS, ...XRAY, ...EXPECTED_ACTIONS[route.handler]!].sort());
    }
  });

  it.each([
    ['documents-file', 'kms:Decrypt', 'through S3 only'],
    ['documents-create', 'kms:GenerateDataKey', 'through S3 only'],
    ['documents-upload-create', 'kms:GenerateDataKey', 'through S3 only'],
    ['paymethods-charge', 'kms:Decrypt', 'for vault data keys only'],
    ['paymethods-create', 'kms:GenerateDataKey', 'for vault data keys only'],
  ] as const)('lets %s use %s on the vault key %s', (handler, action, how) => {
    const route = fixtureRoutes.find((candidate) => candidate.handler === handler)!;
    const statements = roleStatements(template, routeFunctionId(template, route))
      .filter((statement) => actionsOf([statement]).includes(action));
    expect(statements).toHaveLength(1);
    expect(statements[0]!.Resource).toEqual({ 'Fn::GetAtt': [vaultKeyId(template), 'Arn'] });
    expect(statements[0]!.Condition).toEqual(
      how === 'for vault data keys only'
        ? { StringEquals: { 'kms:EncryptionContext:purpose': 'paymethod-vault' } }
        : { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['s3.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } },
    );
  });

  it("has a REQUEST authorizer keyed on the Authorization header and the caller's address (either organization header may be sent), cached as long as the local emulator caches", () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization,context.identity.sourceIp',
      AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_TTL_SECONDS,
    });
  });

  it('lets the authorizer read the table, update only failure counters and credentials, and generate MACs with the credential key, nothing else', () => {
    const { AuthorizerUri } = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Authorizer'))[0]!.Properties;
    const functionId = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function'))
      .find((id) => JSON.stringify(AuthorizerUri).includes(`"Fn::GetAtt":["${id}","Arn"]`))!;
    const statements = roleStatements(template, functionId);

    expect(actionsOf(statements)).toEqual([...LOGS, ...XRAY, ...READ, 'dynamodb:UpdateItem', 'kms:GenerateMac'].sort());
    expect(statements.find((statement) => statement.Action === 'kms:GenerateMac')?.Resource).toEqual({ 'Fn::GetAtt': [macKeyId(template), 'Arn'] });
    expect(statements.find((statement) => statement.Action === 'dynamodb:UpdateItem')?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['AUTHFAIL#*', 'CRED#*'] },
    });
    expect(environmentOf(template, functionId)).toMatchObject({
      TABLE_NAME: paymethodTableRef(template),
      CREDENTIAL_MAC_KEY_ID: { Ref: macKeyId(template) },
    });
  });

  it('accepts multipart bodies as binary and throttles the dev stage', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['multipart/form-data'] });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      MethodSettings: [Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
    });
  });

  it('finalizes upload sessions from S3 events under uploads/, retrying twice, then to a dead-letter queue', () => {
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          Match.objectLike({ Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'uploads/' }] } } }),
        ],
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 2,
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Description: Match.stringLikeRegexp('^Checks a file posted'), Timeout: 60 });
  });

  it('outputs what the CLIs need, without exports', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown; Export?: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual([
      'AccountUpdaterHistoryTableName', 'AlarmTopicArn', 'ApiUrl', 'CredentialMacKeyId', 'DashboardName', 'DocumentsBucketName', 'EnvironmentName', 'EventBusArn', 'EventBusName', 'FingerprintKeyId', 'PaypalSecretArn', 'ReportsBucketName', 'RestApiId', 'StageName', 'TableName', 'VaultKeyId',
    ]);
    expect(Object.values(outputs).every((output) => output.Export === undefined)).toBe(true);
    expect(outputs.EnvironmentName!.Value).toBe('sandbox');
    expect(outputs.TableName!.Value).toEqual(paymethodTableRef(template));
    expect(outputs.DocumentsBucketName!.Value).toEqual({ Ref: bucketId(template, 'documents') });
    expect(outputs.AlarmTopicArn!.Value).toEqual(refTo(template, 'AWS::SNS::Topic'));
    expect(outputs.DashboardName!.Value).toEqual(refTo(template, 'AWS::CloudWatch::Dashboard'));
    // The stage URL, ending at the stage: clients append v3/...
    expect(JSON.stringify(outputs.ApiUrl!.Value)).toMatch(/\.execute-api\..*"\/",\{"Ref":"[^"]+Stage[^"]*"\},"\/"\]\]\}$/);
  });
});

describe('PaymentsApiStack (prod)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('prod'), { routes: fixtureRoutes, functionsDir });
  }, SYNTH_TIMEOUT_MS);

  it('retains and protects data, and answers as live', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', Properties: { DeletionProtectionEnabled: true } });
    for (const type of ['AWS::KMS::Key', 'AWS::S3::Bucket', 'AWS::Logs::LogGroup']) {
      for (const resource of Object.values(template.findResources(type))) expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 365 });
    template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'prod' });
    for (const response of Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse'))) {
      const body = JSON.parse((response.Properties.ResponseTemplates as Record<string, string>)['application/json']!);
      expect(body.response.environment).toBe('live');
    }
    template.hasOutput('EnvironmentName', { Value: 'live' });
  });
});

describe('PaymentsApiStack (route table edge cases)', () => {
  it('still synthesizes a deployable API with no routes, and no authorizer', () => {
    const template = synthesize(settings('dev'), { routes: [], s3Triggers: [], streamTriggers: [], eventRuleTriggers: [], functionsDir });
    // Only the Account Updater's functions, the webhook fan-out and sender, and the bucket-notification custom resource remain.
    template.resourceCountIs('AWS::Lambda::Function', ACCOUNT_UPDATER_FUNCTIONS + WEBHOOK_QUEUE_TRIGGERS.length + 1);
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    expect(findMethod(template, '/', 'ANY')).toBeDefined();
  }, SYNTH_TIMEOUT_MS);

  it('refuses a path outside /v3', () => {
    const route = { ...fixtureRoutes[0]!, path: '/organizations/{organization_id}/paymethods' };
    expect(() => synthesize(settings('dev'), { routes: [route], functionsDir })).toThrow(/must start with \/v3\//);
  }, SYNTH_TIMEOUT_MS);
});

describe('PaymentsApiStack (the real route table and functions)', () => {
  let template: Template;
  beforeAll(() => {
    template = synthesize(settings('dev'));
  }, SYNTH_TIMEOUT_MS);

  it('gives every route in the table a Lambda method, and no others', () => {
    for (const route of routes) {
      expect(findMethod(template, route.path, route.method), `${route.method} ${route.path}`).toMatchObject({
        Integration: { Type: 'AWS_PROXY' },
        AuthorizationType: route.auth === 'none' ? 'NONE' : 'CUSTOM',
      });
    }
    const proxyMethods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))
      .filter((method) => (method.Properties.Integration as { Type: string }).Type === 'AWS_PROXY');
    expect(proxyMethods).toHaveLength(routes.length);
  });

  it('grants every route function what its declared access implies, on the narrowest resources', () => {
    assertLeastPrivilege(template, routes);
  });

  it('lets only the routes that fingerprint use the fingerprint key, and those that keep Idempotency-Key records the request-hash key', () => {
    const fingerprintKey = { 'Fn::GetAtt': [fingerprintKeyId(template), 'Arn'] };
    const requestHashKey = { 'Fn::GetAtt': [requestHashKeyId(template), 'Arn'] };
    for (const route of routes) {
      const functionId = routeFunctionId(template, route);
      const macKeys = roleStatements(template, functionId).filter((statement) => actionsOf([statement]).includes('kms:GenerateMac')).flatMap((statement) => [statement.Resource].flat());
      const keepsKeys = route.access.writes?.includes('idempotency') === true;
      expect(macKeys, route.handler).toEqual([...(route.access.fingerprint ? [fingerprintKey] : []), ...(keepsKeys ? [requestHashKey] : [])]);
      const variables = environmentOf(template, functionId);
      expect(variables.FINGERPRINT_KEY_ID, route.handler).toEqual(route.access.fingerprint ? fingerprintKey : undefined);
      expect(variables.REQUEST_HASH_KEY_ID, route.handler).toEqual(keepsKeys ? requestHashKey : undefined);
    }
    // The mint and document uploads keep keys and fingerprint nothing: no way to derive a fingerprint key.
    for (const handler of ['onetimetokens-create', 'documents-create', 'documents-create-upload']) {
      const route = routes.find((candidate) => candidate.handler === handler)!;
      expect(JSON.stringify(roleStatements(template, routeFunctionId(template, route))), handler).not.toContain(fingerprintKeyId(template));
    }
  });

  it('keeps document functions off paymethod items and paymethod functions off documents', () => {
    const writtenPrefixes = (handler: string) => {
      const route = routes.find((candidate) => candidate.handler === handler)!;
      return roleStatements(template, routeFunctionId(template, route))
        .filter((statement) => actionsOf([statement]).includes('dynamodb:PutItem'))
        .flatMap((statement) => leadingKeysOf(statement) ?? ['(any key)']);
    };
    for (const handler of ['documents-create', 'documents-create-upload', 'documents-delete']) {
      expect(writtenPrefixes(handler).every((prefix) => ['DOC#*', 'DOCSHA#*', 'IDEM#*'].includes(prefix)), handler).toBe(true);
    }
    for (const handler of ['paymethods-create-customer', 'paymethods-update', 'paymethods-delete-organization', 'onetimetokens-create']) {
      const prefixes = writtenPrefixes(handler);
      expect(prefixes.length, handler).toBeGreaterThan(0);
      expect(prefixes.some((prefix) => ['DOC#*', 'ORG#*', 'CRED#*', 'PUBKEY#*', '(any key)'].includes(prefix)), handler).toBe(false);
    }
  });
});

/** The route-table-driven policy check: every function, its actions, and no wildcard beyond X-Ray and object prefixes. */
function assertLeastPrivilege(template: Template, routeList: readonly (typeof routes)[number][]): void {
  for (const route of routeList) {
    const functionId = routeFunctionId(template, route);
    const statements = roleStatements(template, functionId);
    expect(actionsOf(statements), route.handler).toEqual(expectedActions(route));
    // Every table write is limited to the partition keys of the item kinds the route declares.
    const writes = statements.filter((statement) => actionsOf([statement]).some((action) => TABLE_WRITES.includes(action)));
    const expectedWrites = route.access.table === 'write' ? route.access.writes!.map((kind) => `${ITEM_PARTITION_PREFIXES[kind]}*`) : [];
    // On the webhook deliveries table, the item kinds the route declares for it.
    const expectedDeliveryWrites = (route.access.webhookDeliveries?.writes ?? []).map((kind) => `${ITEM_PARTITION_PREFIXES[kind]}*`);
    for (const statement of writes) {
      const patterns = leadingKeysOf(statement);
      const onDeliveries = JSON.stringify(statement.Resource).includes('WebhookDeliveriesTable');
      if (actionsOf([statement]).includes('dynamodb:BatchWriteItem')) expect(patterns, route.handler).toEqual([onDeliveries ? 'WHP#*' : 'PAGE#*']);
      else expect(patterns, route.handler).toEqual(onDeliveries ? expectedDeliveryWrites : expectedWrites);
    }
    for (const statement of statements) {
      const resources = JSON.stringify(statement.Resource);
      if (resources === '"*"') expect(actionsOf([statement]), route.handler).toEqual(XRAY);
      if (actionsOf([statement]).some((action) => action.startsWith('s3:'))) {
        // Listing is on the bucket, only where a usage lists, and for the delete route only under documents/.
        if (actionsOf([statement]).includes('s3:ListBucket')) {
          expect(actionsOf([statement]), route.handler).toEqual(['s3:ListBucket']);
          expect(statement.Condition, route.handler).toEqual({ StringLike: { 's3:prefix': ['documents/*'] } });
          continue;
        }
        expect(resources, route.handler).toMatch(/\/(documents|uploads)\/\*"\]\]\}\]?$/);
        // uploads/ only for routes that deal with upload sessions.
        const uploads = ['presign-upload', 'delete-upload', 'finalize-upload'].some((usage) => route.access.documents?.includes(usage as never));
        if (!uploads) expect(resources.includes('/uploads/*'), route.handler).toBe(false);
      }
      if (resources.includes('/index/')) expect(resources, route.handler).not.toContain('/index/*');
    }
  }
}

/** From the route table's vocabulary to IAM actions, written out here rather than taken from infra/access.ts. */
function expectedActions(route: (typeof routes)[number]): string[] {
  const { access } = route;
  const table = access.table ?? (route.auth === 'secret' ? 'read' : undefined);
  const documentActions: Record<string, string[]> = {
    read: ['s3:GetObject', 'kms:Decrypt'],
    write: ['s3:PutObject', 'kms:GenerateDataKey'],
    'presign-upload': ['s3:PutObject', 'kms:GenerateDataKey'],
    delete: ['s3:DeleteObject'],
    'delete-upload': ['s3:DeleteObject'],
    'list-copies': ['s3:ListBucket'],
    'finalize-upload': ['s3:GetObject', 's3:DeleteObject', 's3:ListBucket', 'kms:Decrypt'],
    retain: ['s3:PutObjectRetention', 's3:PutObjectLegalHold'],
    'purge-infected': ['s3:DeleteObject', 's3:DeleteObjectVersion'],
  };
  const vaultActions: Record<string, string[]> = { encrypt: ['kms:GenerateDataKey'], decrypt: ['kms:Decrypt'] };
  return [...new Set([
    ...LOGS,
    ...XRAY,
    ...(table === 'read' ? READ : table === 'write' ? WRITE : []),
    ...(access.vault ?? []).flatMap((usage) => vaultActions[usage]!),
    ...(access.documents ?? []).flatMap((usage) => documentActions[usage]!),
    ...(access.paypal ? ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'] : []),
    ...(access.pageBoundaries ? ['dynamodb:BatchWriteItem'] : []),
    // The webhook deliveries table: reads, writes of the kinds named, parking in batches.
    ...(access.webhookDeliveries ? READ : []),
    ...(access.webhookDeliveries?.writes?.length ? WRITE : []),
    ...(access.webhookDeliveries?.parks ? ['dynamodb:BatchWriteItem'] : []),
    // Fingerprints, and the keyed hash of the requests whose Idempotency-Key records it writes.
    ...(access.fingerprint || access.writes?.includes('idempotency') ? ['kms:GenerateMac'] : []),
    // Ping and recover send to the webhook delivery queue.
    ...(WEBHOOK_QUEUE_GRANTS[route.handler] ?? []).flatMap((grant) => grant.actions.map((action) => `sqs:${action}`)),
  ])].sort();
}
