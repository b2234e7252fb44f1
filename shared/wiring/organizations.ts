import { dynamo } from '#shared/aws/dynamodb.ts';
import { config } from '#shared/runtime/config.ts';
import type { OrganizationStore } from '#shared/domain/tenancy.ts';
import { CachedOrganizationStore, DynamoOrganizationStore } from '#shared/store/organizations.ts';
import { once } from './once.ts';

/** One cache of organization parentage per container, shared by the tenancy check and the use cases. */
export const organizationStore = /* @__PURE__ */ once((): OrganizationStore => new CachedOrganizationStore(new DynamoOrganizationStore(dynamo, config.tableName)));
