/**
 * DynamoDB's and IAM's checks, in front of DynamoDB Local, which checks
 * neither signatures nor grants. Every caller's DynamoDB endpoint is here (the
 * functions', the CLIs', the tests'). Each call must be signed (SigV4,
 * local/sigv4.ts) by a credential the runtime issued; its signer is the
 * caller. The operator (the runtime, the CLIs) may do anything; in AWS every
 * function has its own role, and a call its role does not allow fails with
 * AccessDeniedException, so what a function's grants (shared/platform/dynamodb-grants.ts,
 * the same data CDK turns into its policy) do not allow is answered as DynamoDB
 * answers it. Everything else passes through unchanged. The server, the
 * signature check and the reading of grants are those of every local
 * endpoint (local/gate-server.ts, local/function-identity.ts). A handler that writes
 * an item kind its route did not declare then fails in every local test, not
 * first after a deploy.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoGrant, GrantedTable } from '#shared/platform/dynamodb-grants.ts';
import { grantsAllow } from '#shared/platform/dynamodb-grants.ts';
import { TABLE_KEY } from '#shared/platform/table.ts';
import { grantsOf, logRefusal, notAuthorized } from './function-identity.ts';
import type { GateOptions, GateServer, ServiceProtocol } from './gate-server.ts';
import { AwsServiceError, connectTo, readBoundedBody, relay, requireSignature, startGateServer } from './gate-server.ts';

/** DynamoDB's own cap on a request body. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const TARGET_PREFIX = 'DynamoDB_20120810.';

export interface DynamoGateOptions extends GateOptions<GrantedTable, DynamoGrant> {
  /** DynamoDB Local's endpoint. */
  readonly target: string;
}

export async function startDynamoGate(options: DynamoGateOptions): Promise<GateServer> {
  const target = new URL(options.target);
  const emulator = connectTo(options.target);
  return startGateServer({
    name: 'dynamodb gate',
    port: options.port,
    protocol: DYNAMODB_PROTOCOL,
    log: options.log,
    closed: emulator.close,
    async handle(req, res) {
      const body = await readBoundedBody(req, MAX_REQUEST_BYTES, () => new Error('request body over 16 MB'));
      const signer = await requireSignature(options.verifier, req, body, 'dynamodb');
      const grants = grantsOf(signer, options.functions);
      const refused = grants && refusal(grants, req.headers['x-amz-target'], body, options.resources);
      if (refused) {
        logRefusal(options.log, 'dynamodb', signer, { action: refused.action, table: refused.table, ...(refused.index ? { index: refused.index } : {}), partitionKeys: refused.partitionKeys });
        const resource = `table/${refused.table}${refused.index ? `/index/${refused.index}` : ''}`;
        throw new AwsServiceError('AccessDeniedException', notAuthorized(signer, `dynamodb:${refused.action}`, resource));
      }
      await relay(await emulator.passOn(req, res, { ...req.headers, host: target.host, 'content-length': String(body.length) }, body), res);
    },
  });
}

/** The first action of the request its grants do not allow (a transaction or batch is refused whole, as IAM refuses it). */
export function refusal(grants: readonly DynamoGrant[], targetHeader: string | string[] | undefined, body: Buffer, tables: Readonly<Record<string, GrantedTable>>): NamedAction | undefined {
  const target = Array.isArray(targetHeader) ? targetHeader[0] : targetHeader;
  const operation = target?.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : (target ?? '(none)');
  let input: Record<string, unknown>;
  try {
    input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
  } catch {
    // Not ours to judge: DynamoDB Local answers a malformed body as DynamoDB does.
    return undefined;
  }
  for (const requested of requestedActions(operation, input)) {
    const table = tables[requested.table];
    const allowed = table !== undefined && grantsAllow(grants, { ...requested, table });
    if (!allowed) return requested;
  }
  return undefined;
}

/** One action of a request, on a table named as the request names it. */
type NamedAction = { action: string; table: string; index?: string; partitionKeys: string[] };

/** What IAM authorizes a DynamoDB request as: one action per table or, for transactions, per item. */
export function requestedActions(operation: string, input: Record<string, unknown>): NamedAction[] {
  const tableName = String(input.TableName ?? '');
  switch (operation) {
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
      return [{ action: operation, table: tableName, partitionKeys: partitionKeys([input.Key]) }];
    case 'PutItem':
      return [{ action: operation, table: tableName, partitionKeys: partitionKeys([input.Item]) }];
    case 'Query':
    case 'Scan':
      return [{ action: operation, table: tableName, ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}), partitionKeys: [] }];
    case 'BatchGetItem':
      return Object.entries(objectOf(input.RequestItems)).map(([table, request]) => ({
        action: operation,
        table,
        partitionKeys: partitionKeys(arrayOf(objectOf(request).Keys)),
      }));
    case 'BatchWriteItem':
      return Object.entries(objectOf(input.RequestItems)).map(([table, requests]) => ({
        action: operation,
        table,
        partitionKeys: partitionKeys(arrayOf(requests).map((entry) => objectOf(objectOf(entry).PutRequest).Item ?? objectOf(objectOf(entry).DeleteRequest).Key)),
      }));
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return arrayOf(input.TransactItems).flatMap((entry) =>
        Object.entries(objectOf(entry)).map(([kind, item]) => {
          const fields = objectOf(item);
          return {
            action: TRANSACT_ACTIONS[kind] ?? kind,
            table: String(fields.TableName ?? ''),
            partitionKeys: partitionKeys([fields.Key ?? fields.Item]),
          };
        }),
      );
    default:
      return [{ action: operation, table: tableName, partitionKeys: [] }];
  }
}

/** The action IAM checks for each item of a transaction. */
const TRANSACT_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

function partitionKeys(items: readonly unknown[]): string[] {
  return items.map((item) => {
    const value = objectOf(objectOf(item)[TABLE_KEY.partitionKey]);
    return typeof value.S === 'string' ? value.S : '';
  });
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * DynamoDB's answers (JSON 1.0): the error type in its `com.amazon.coral.service#`
 * namespace; an AccessDeniedException carries its text as `Message`, as
 * DynamoDB sends it, the others as `message` (the SDK reads either).
 */
const DYNAMODB_PROTOCOL: ServiceProtocol = {
  answer(_req, res, error) {
    const text = JSON.stringify({ __type: `com.amazon.coral.service#${error.type}`, [error.type === 'AccessDeniedException' ? 'Message' : 'message']: error.message });
    res.writeHead(error.status, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(text), 'x-amzn-RequestId': randomUUID() });
    res.end(text);
  },
  internalError: new AwsServiceError('InternalServerError', 'DynamoDB Local did not answer.', 502),
};
