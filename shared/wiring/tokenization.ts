import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/runtime/config.ts';
import type { MintRateLimiter, PublishableKeyStore } from '#shared/domain/publishable-keys.ts';
import { CachedLocationKeys, DynamoMintRateLimiter, DynamoPublishableKeyStore } from '#shared/store/publishable-keys.ts';
import { once } from './once.ts';

/** The preflight's view of a location's keys, cached for a minute per container. */
export const publishableKeysByLocation = /* @__PURE__ */ once(
  (): Pick<PublishableKeyStore, 'listByLocation'> => new CachedLocationKeys(new DynamoPublishableKeyStore(dynamo, config.tableName)),
);

/** Counts each publishable key's mint attempts (the shared middleware charges them). */
export const mintRateLimiter = /* @__PURE__ */ once((): MintRateLimiter => new DynamoMintRateLimiter(dynamo, config.tableName));
