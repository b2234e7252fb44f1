import { describe, expect, it } from 'vitest';
import { bucketGrants, bucketGrantsAllow, mayListWholeBucket } from '#shared/platform/bucket-grants.ts';
import type { DynamoGrant } from '#shared/platform/dynamodb-grants.ts';
import { dynamodbGrants, grantsAllow } from '#shared/platform/dynamodb-grants.ts';
import { s3Triggers } from '#shared/platform/triggers.ts';
import { accessFor, AUTHORIZER_ACCESS, BACKGROUND_FUNCTION_ACCESS } from '#shared/platform/function-environment.ts';
import { routes } from '#shared/platform/routes.ts';
import type { ItemKind } from '#shared/platform/item-kinds.ts';
import { ITEM_PARTITION_PREFIXES } from '#shared/platform/item-kinds.ts';
import { keyGrants, keyGrantsAllow } from '#shared/platform/key-grants.ts';
import { VAULT_ENCRYPTION_PURPOSE } from '#shared/platform/names.ts';
import { keys } from '#shared/store/keys.ts';
import { webhookKeys } from '#shared/store/webhooks.ts';
import { refusal, requestedActions } from '../../local/dynamodb-gate.ts';
import { requestedS3Actions } from '../../local/s3-gate.ts';

/** One key of each kind, as the store builds it. */
const BUILT: Record<ItemKind, string> = {
  organization: keys.organization('org_1').pk,
  credential: keys.credential('acc_1').pk,
  authFailures: keys.authFailures({ kind: 'address', id: '203.0.113.9' }, 1).pk,
  paymethod: keys.paymethod('mth_1').pk,
  duplicateScope: keys.duplicateScope('org_1', 'cst_1', 'fp').pk,
  customerDefault: keys.customerDefault('org_1', 'cst_1').pk,
  oneTimeToken: keys.oneTimeToken('ott_1').pk,
  publishableKey: keys.publishableKey('pk_1').pk,
  mintCounter: keys.mintCounter('pk_1', 1).pk,
  idempotency: keys.idempotency('org_1', 'key').pk,
  pageBoundary: keys.pageBoundary('fp', 10, 2).pk,
  document: keys.document('org_1', 'doc_1').pk,
  documentHash: keys.documentHash('org_1', 'dsp_1', 'ab').pk,
  auHistory: keys.auHistory('org_1', '2026-05', '2026-05-01T00:00:00.000Z', 'mth_1', 2).pk,
  auMonth: keys.auMonth('2026-05', 'org_1').pk,
  auFile: keys.auFile('sha').pk,
  auDelivery: keys.auDelivery('au-inbox/a.csv', '1').pk,
  webhookEndpoint: webhookKeys.endpoint('org_1', 'whe_1').pk,
  webhookLane: webhookKeys.lane('whe_1', 'mth_1'),
  webhookHeld: webhookKeys.settled({ webhook_endpoint_id: 'whe_1', record_id: 'mth_1', created_at: '2026-05-01T00:00:00.000Z', message_id: 'msg_1' }).pk,
  webhookAttempt: webhookKeys.attemptPartition('whe_1', 0),
  webhookSlot: webhookKeys.slot('whe_1', 0).pk,
  webhookParked: webhookKeys.parkedPartition('whe_1', 0),
};

const S = (value: string) => ({ S: value });
const TABLES = { payments: 'table', history: 'auHistory' } as const;
const body = (input: unknown) => Buffer.from(JSON.stringify(input));

describe('item kinds', () => {
  it('name the prefix of every key the store builds of that kind, and only of that kind', () => {
    for (const [kind, key] of Object.entries(BUILT)) {
      const matching = Object.entries(ITEM_PARTITION_PREFIXES).filter(([, prefix]) => key.startsWith(prefix)).map(([name]) => name);
      expect(matching, key).toEqual([kind]);
    }
  });

  it('have no prefix that starts another', () => {
    const prefixes = Object.values(ITEM_PARTITION_PREFIXES);
    for (const prefix of prefixes) expect(prefixes.filter((other) => other.startsWith(prefix)), prefix).toEqual([prefix]);
  });
});

describe('grants from declared access', () => {
  it('derive for every function the stack and the local runtime host, and limit every table write to declared kinds', () => {
    const accesses = [
      ...routes.map((route) => [route.handler, accessFor(route)] as const),
      ...s3Triggers.map((trigger) => [trigger.handler, trigger.access] as const),
      ['authorizer', AUTHORIZER_ACCESS] as const,
      ...Object.entries(BACKGROUND_FUNCTION_ACCESS),
    ];
    const writeActions = ['PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'BatchWriteItem'];
    for (const [name, access] of accesses) {
      for (const grant of dynamodbGrants(access)) {
        if (grant.actions.some((action) => writeActions.includes(action))) expect(grant.items?.length, name).toBeGreaterThan(0);
      }
    }
  });

  it('refuse a write access that names no item kinds, and kinds without write access', () => {
    expect(() => dynamodbGrants({ table: 'write' })).toThrow(/writes/);
    expect(() => dynamodbGrants({ table: 'read', writes: ['document'] })).toThrow(/not write/);
  });
});

describe("IAM's reading of the grants", () => {
  const documentsCreate = dynamodbGrants(accessFor(routes.find((route) => route.handler === 'documents-create')!));

  it('allows reads anywhere, Query on indexes, and writes under the declared kinds only', () => {
    expect(grantsAllow(documentsCreate, { action: 'GetItem', table: 'table', partitionKeys: [BUILT.paymethod] })).toBe(true);
    expect(grantsAllow(documentsCreate, { action: 'Query', table: 'table', index: 'gsi1', partitionKeys: [] })).toBe(true);
    expect(grantsAllow(documentsCreate, { action: 'PutItem', table: 'table', partitionKeys: [BUILT.document] })).toBe(true);
    expect(grantsAllow(documentsCreate, { action: 'PutItem', table: 'table', partitionKeys: [BUILT.paymethod] })).toBe(false);
    expect(grantsAllow(documentsCreate, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.organization] })).toBe(false);
    // No grant names Scan, or another table.
    expect(grantsAllow(documentsCreate, { action: 'Scan', table: 'table', partitionKeys: [] })).toBe(false);
    expect(grantsAllow(documentsCreate, { action: 'GetItem', table: 'auHistory', partitionKeys: [BUILT.auFile] })).toBe(false);
  });

  it('allows a Query of an index only where the grant includes indexes', () => {
    const baseOnly: DynamoGrant[] = [{ table: 'table', actions: ['Query'] }];
    expect(grantsAllow(baseOnly, { action: 'Query', table: 'table', partitionKeys: [] })).toBe(true);
    expect(grantsAllow(baseOnly, { action: 'Query', table: 'table', index: 'gsi1', partitionKeys: [] })).toBe(false);
  });

  it('refuses a transaction or batch whole when one item is outside the grant', () => {
    const transaction = body({
      TransactItems: [
        { Put: { TableName: 'payments', Item: { pk: S(BUILT.document), sk: S('DOC') } } },
        { Update: { TableName: 'payments', Key: { pk: S(BUILT.paymethod), sk: S('MTH') }, UpdateExpression: 'SET a = :a' } },
      ],
    });
    expect(refusal(documentsCreate, 'DynamoDB_20120810.TransactWriteItems', transaction, TABLES)).toEqual({ action: 'UpdateItem', table: 'payments', partitionKeys: [BUILT.paymethod] });
    const batch = body({ RequestItems: { payments: [{ PutRequest: { Item: { pk: S(BUILT.document) } } }, { DeleteRequest: { Key: { pk: S(BUILT.paymethod) } } }] } });
    expect(requestedActions('BatchWriteItem', JSON.parse(batch.toString()) as Record<string, unknown>)).toEqual([{ action: 'BatchWriteItem', table: 'payments', partitionKeys: [BUILT.document, BUILT.paymethod] }]);
    // documents-create has no BatchWriteItem at all; a list function's only batch writes are page boundaries.
    expect(refusal(documentsCreate, 'DynamoDB_20120810.BatchWriteItem', batch, TABLES)).toMatchObject({ action: 'BatchWriteItem' });
    const listGrants = dynamodbGrants(accessFor(routes.find((route) => route.handler === 'documents-list')!));
    expect(refusal(listGrants, 'DynamoDB_20120810.BatchWriteItem', body({ RequestItems: { payments: [{ PutRequest: { Item: { pk: S(BUILT.pageBoundary) } } }] } }), TABLES)).toBeUndefined();
    expect(refusal(listGrants, 'DynamoDB_20120810.BatchWriteItem', batch, TABLES)).toMatchObject({ action: 'BatchWriteItem' });
  });

  it('refuses a table it does not know and an operation no grant names', () => {
    expect(refusal(documentsCreate, 'DynamoDB_20120810.GetItem', body({ TableName: 'other', Key: { pk: S(BUILT.document) } }), TABLES)).toMatchObject({ table: 'other' });
    expect(refusal(documentsCreate, 'DynamoDB_20120810.DescribeTable', body({ TableName: 'payments' }), TABLES)).toMatchObject({ action: 'DescribeTable' });
    expect(refusal(documentsCreate, 'DynamoDB_20120810.Scan', body({ TableName: 'payments' }), TABLES)).toMatchObject({ action: 'Scan' });
  });

  it('lets the authorizer update only failure counters and credentials, and the chunk function write only cards, their entries and history', () => {
    const authorizer = dynamodbGrants(AUTHORIZER_ACCESS);
    expect(grantsAllow(authorizer, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.authFailures] })).toBe(true);
    expect(grantsAllow(authorizer, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.credential] })).toBe(true);
    expect(grantsAllow(authorizer, { action: 'PutItem', table: 'table', partitionKeys: [BUILT.credential] })).toBe(false);
    expect(grantsAllow(authorizer, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.organization] })).toBe(false);
    const chunk = dynamodbGrants(BACKGROUND_FUNCTION_ACCESS['au-chunk']!);
    expect(grantsAllow(chunk, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.paymethod] })).toBe(true);
    expect(grantsAllow(chunk, { action: 'UpdateItem', table: 'table', partitionKeys: [BUILT.customerDefault] })).toBe(false);
    expect(grantsAllow(chunk, { action: 'BatchWriteItem', table: 'auHistory', partitionKeys: [BUILT.auHistory, BUILT.auHistory] })).toBe(true);
    expect(grantsAllow(chunk, { action: 'BatchWriteItem', table: 'auHistory', partitionKeys: [BUILT.auHistory, BUILT.auFile] })).toBe(false);
  });
});

describe('key grants', () => {
  const purpose = { purpose: VAULT_ENCRYPTION_PURPOSE };
  const grantsOf = (handler: string) => keyGrants(accessFor(routes.find((route) => route.handler === handler)!));

  it('let a route that only seals generate vault data keys under the vault context, and never open one', () => {
    const locationless = grantsOf('paymethods-create-locationless');
    expect(keyGrantsAllow(locationless, { action: 'GenerateDataKey', key: 'vault', encryptionContext: purpose })).toBe(true);
    expect(keyGrantsAllow(locationless, { action: 'GenerateDataKey', key: 'vault', encryptionContext: {} })).toBe(false);
    expect(keyGrantsAllow(locationless, { action: 'GenerateDataKey', key: 'vault', encryptionContext: { purpose: 'documents' } })).toBe(false);
    expect(keyGrantsAllow(locationless, { action: 'Decrypt', key: 'vault', encryptionContext: purpose })).toBe(false);
    expect(keyGrantsAllow(locationless, { action: 'GenerateMac', key: 'fingerprint', encryptionContext: {} })).toBe(true);
    expect(keyGrantsAllow(locationless, { action: 'GenerateMac', key: 'requestHash', encryptionContext: {} })).toBe(true);
    expect(keyGrantsAllow(locationless, { action: 'GenerateMac', key: 'credentialMac', encryptionContext: {} })).toBe(false);
  });

  it('give reads and document reads no key at all, and only the authorizer the secure-key MAC', () => {
    for (const handler of ['paymethods-get', 'paymethods-list-organization', 'documents-download', 'documents-delete']) expect(grantsOf(handler), handler).toEqual([]);
    // A document upload keeps Idempotency-Key records: GenerateMac on the request-hash key for their keyed request hash, nothing else.
    expect(grantsOf('documents-create')).toEqual([{ key: 'requestHash', actions: ['GenerateMac'] }]);
    // No fingerprint of its own, but request hashes: minting holds the same grant, and nothing that opens a number.
    expect(grantsOf('onetimetokens-create')).toEqual([{ key: 'vault', actions: ['GenerateDataKey'], encryptionContext: purpose }, { key: 'requestHash', actions: ['GenerateMac'] }]);
    for (const route of routes) expect(grantsOf(route.handler).some((grant) => grant.key === 'credentialMac'), route.handler).toBe(false);
    expect(keyGrantsAllow(keyGrants(AUTHORIZER_ACCESS), { action: 'GenerateMac', key: 'credentialMac', encryptionContext: {} })).toBe(true);
  });

  it('give the request-hash key to exactly the functions that keep Idempotency-Key records, and the fingerprint key only to those that fingerprint', () => {
    const mac = (key: 'fingerprint' | 'requestHash') => ({ action: 'GenerateMac', key, encryptionContext: {} });
    const functions = [
      ...routes.map((route) => [route.handler, accessFor(route)] as const),
      ...Object.entries(BACKGROUND_FUNCTION_ACCESS),
      ['authorizer', AUTHORIZER_ACCESS] as const,
    ];
    for (const [name, access] of functions) {
      const grants = keyGrants(access);
      expect(keyGrantsAllow(grants, mac('requestHash')), name).toBe(access.writes?.includes('idempotency') === true);
      expect(keyGrantsAllow(grants, mac('fingerprint')), name).toBe(access.fingerprint === true);
    }
    // Keeping Idempotency-Key records alone never opens the fingerprint key: the mint and the document uploads derive no fingerprint key.
    for (const handler of ['onetimetokens-create', 'documents-create', 'documents-create-upload']) {
      expect(keyGrantsAllow(grantsOf(handler), mac('requestHash')), handler).toBe(true);
      expect(keyGrantsAllow(grantsOf(handler), mac('fingerprint')), handler).toBe(false);
    }
  });

  it('refuse a key no grant names (an unknown key too)', () => {
    const chunk = keyGrants(BACKGROUND_FUNCTION_ACCESS['au-chunk']!);
    expect(keyGrantsAllow(chunk, { action: 'Decrypt', key: 'vault', encryptionContext: purpose })).toBe(true);
    expect(keyGrantsAllow(chunk, { action: 'Decrypt', key: undefined, encryptionContext: purpose })).toBe(false);
    expect(keyGrantsAllow(keyGrants(BACKGROUND_FUNCTION_ACCESS['au-export']!), { action: 'Decrypt', key: 'vault', encryptionContext: purpose })).toBe(false);
  });
});

describe('bucket grants', () => {
  const BUCKETS = { docs: 'documents', reports: 'reports' } as const;
  const grantsOf = (handler: string) => bucketGrants(accessFor(routes.find((route) => route.handler === handler)!));

  it('read S3 REST requests as IAM authorizes them', () => {
    expect(requestedS3Actions('HEAD', '/docs/uploads/org_1/doc_1/a.png', {}, BUCKETS)).toEqual([{ action: 'GetObject', bucket: 'documents', key: 'uploads/org_1/doc_1/a.png' }]);
    expect(requestedS3Actions('GET', '/reports/au-inbox/a.csv?versionId=3', {}, BUCKETS)).toEqual([{ action: 'GetObjectVersion', bucket: 'reports', key: 'au-inbox/a.csv' }]);
    expect(requestedS3Actions('GET', '/docs/?list-type=2&prefix=documents%2Forg_1%2F', {}, BUCKETS)).toEqual([{ action: 'ListBucket', bucket: 'documents', prefix: 'documents/org_1/' }]);
    expect(requestedS3Actions('PUT', '/docs/documents/org_1/doc_1', { 'x-amz-copy-source': '/docs/uploads/org_1/doc_1%20a.png' }, BUCKETS)).toEqual([
      { action: 'PutObject', bucket: 'documents', key: 'documents/org_1/doc_1' },
      { action: 'GetObject', bucket: 'documents', key: 'uploads/org_1/doc_1 a.png' },
    ]);
    expect(requestedS3Actions('POST', '/reports/au-reports/r.csv?uploads', {}, BUCKETS)).toEqual([{ action: 'PutObject', bucket: 'reports', key: 'au-reports/r.csv' }]);
    expect(requestedS3Actions('DELETE', '/reports/au-reports/r.csv?uploadId=1', {}, BUCKETS)).toEqual([{ action: 'AbortMultipartUpload', bucket: 'reports', key: 'au-reports/r.csv' }]);
    expect(requestedS3Actions('POST', '/docs?delete', {}, BUCKETS)).toEqual([{ action: 'DeleteObjects', bucket: 'documents' }]);
  });

  it('keep document functions to their prefixes, and list only where a usage lists', () => {
    const create = grantsOf('documents-create');
    expect(bucketGrantsAllow(create, { action: 'PutObject', bucket: 'documents', key: 'documents/org_1/doc_1' })).toBe(true);
    expect(bucketGrantsAllow(create, { action: 'PutObject', bucket: 'documents', key: 'uploads/org_1/doc_1' })).toBe(false);
    expect(bucketGrantsAllow(create, { action: 'DeleteObject', bucket: 'documents', key: 'uploads/org_1/doc_1' })).toBe(false);
    expect(bucketGrantsAllow(create, { action: 'PutObject', bucket: 'reports', key: 'documents/org_1/doc_1' })).toBe(false);
    const remove = grantsOf('documents-delete');
    expect(bucketGrantsAllow(remove, { action: 'ListBucket', bucket: 'documents', prefix: 'documents/org_1/doc_1/' })).toBe(true);
    expect(bucketGrantsAllow(remove, { action: 'ListBucket', bucket: 'documents', prefix: '' })).toBe(false);
    expect(mayListWholeBucket(remove, 'documents')).toBe(false);
    expect(mayListWholeBucket(bucketGrants(s3Triggers[0]!.access), 'documents')).toBe(true);
  });

  it('keep the Account Updater functions to their folders', () => {
    const merge = bucketGrants(BACKGROUND_FUNCTION_ACCESS['au-merge']!);
    expect(bucketGrantsAllow(merge, { action: 'ListBucket', bucket: 'reports', prefix: 'au-runs/run-1/' })).toBe(true);
    expect(bucketGrantsAllow(merge, { action: 'ListBucket', bucket: 'reports', prefix: 'au-inbox/' })).toBe(false);
    expect(bucketGrantsAllow(merge, { action: 'PutObject', bucket: 'reports', key: 'au-results/org_1/may.csv.json' })).toBe(true);
    expect(bucketGrantsAllow(merge, { action: 'GetObject', bucket: 'reports', key: 'au-inbox/may.csv' })).toBe(false);
    // The chunk reads its range of the update file itself (the map hands it only byte offsets), and nothing it does not need.
    const chunk = bucketGrants(BACKGROUND_FUNCTION_ACCESS['au-chunk']!);
    expect(bucketGrantsAllow(chunk, { action: 'GetObjectVersion', bucket: 'reports', key: 'au-inbox/may.csv' })).toBe(true);
    expect(bucketGrantsAllow(chunk, { action: 'GetObject', bucket: 'reports', key: 'au-results/org_1/may.csv.json' })).toBe(false);
    expect(bucketGrantsAllow(chunk, { action: 'PutObject', bucket: 'reports', key: 'au-inbox/may.csv' })).toBe(false);
    expect(bucketGrantsAllow(chunk, { action: 'ListBucket', bucket: 'reports', prefix: 'au-inbox/' })).toBe(false);
  });
});
