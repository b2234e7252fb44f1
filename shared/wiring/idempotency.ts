import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/config.ts';
import type { IdempotencyStore } from '#shared/domain/idempotency.ts';
import { DynamoIdempotencyStore } from '#shared/store/idempotency.ts';
import { once } from './once.ts';

/** Every POST route keeps its Idempotency-Key records here. */
export const idempotencyStore = /* @__PURE__ */ once((): IdempotencyStore => new DynamoIdempotencyStore(dynamo, config.tableName));
