import { dynamo } from '#shared/aws/dynamodb.ts';
import { kms } from '#shared/aws/kms.ts';
import { KmsRequestHasher } from '#shared/aws/kms-request-hasher.ts';
import { config } from '#shared/runtime/config.ts';
import type { IdempotencyDeps, IdempotencyStore, RequestHasher } from '#shared/domain/idempotency.ts';
import { DynamoIdempotencyStore } from '#shared/store/idempotency.ts';
import { once } from './once.ts';

const idempotencyStore = /* @__PURE__ */ once((): IdempotencyStore => new DynamoIdempotencyStore(dynamo, config.tableName));
/** Under the request-hash key (shared/platform/key-grants.ts grants it to every function that keeps keys, and nothing else). */
const requestHasher = /* @__PURE__ */ once((): RequestHasher => new KmsRequestHasher(kms, config.requestHashKeyId));

/** Every POST route keeps its Idempotency-Key records here, and hashes its requests with this. */
export const idempotency = (): IdempotencyDeps => ({ store: idempotencyStore(), hasher: requestHasher() });
