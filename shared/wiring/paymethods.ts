import { dynamo } from '#shared/aws/dynamodb.ts';
import { PaypalBillingAgreements, paypalCredentials } from '#shared/aws/paypal.ts';
import { config } from '#shared/runtime/config.ts';
import type { BillingAgreements } from '#shared/domain/paymethods/ports.ts';
import { DynamoOneTimeTokenStore } from '#shared/store/one-time-tokens.ts';
import { DynamoPaymethodCreates } from '#shared/store/paymethod-creates.ts';
import { DynamoPaymethodDeletes } from '#shared/store/paymethod-deletes.ts';
import { DynamoPaymethodReads } from '#shared/store/paymethod-reads.ts';
import { DynamoPaymethodUpdates } from '#shared/store/paymethod-updates.ts';
import { fingerprinter, vault } from './number-keys.ts';
import { once } from './once.ts';
import { organizationStore } from './organizations.ts';

/** One adapter per protocol of the paymethod repository; each use case gets the ones it runs. */
export const paymethodReads = /* @__PURE__ */ once(() => new DynamoPaymethodReads(dynamo, config.tableName, config.tableIndexStandIns));
const paymethodCreates = /* @__PURE__ */ once(() => new DynamoPaymethodCreates(dynamo, config.tableName, config.tableIndexStandIns));
const paymethodUpdates = /* @__PURE__ */ once(() => new DynamoPaymethodUpdates(dynamo, config.tableName, config.tableIndexStandIns));
const paymethodDeletes = /* @__PURE__ */ once(() => new DynamoPaymethodDeletes(dynamo, config.tableName, config.tableIndexStandIns));
export const oneTimeTokenStore = /* @__PURE__ */ once(() => new DynamoOneTimeTokenStore(dynamo, config.tableName));
export const billingAgreements = /* @__PURE__ */ once(
  (): BillingAgreements => new PaypalBillingAgreements({ apiUrl: config.paypalApiUrl, credentials: paypalCredentials(config.paypalCredentials) }),
);
export const clock = (): Date => new Date();

export const readDeps = () => ({ paymethods: paymethodReads() });
export const deleteDeps = () => ({ paymethods: paymethodReads(), deletes: paymethodDeletes() });
export const updateDeps = () => ({ paymethods: paymethodReads(), updates: paymethodUpdates(), clock, vault: vault(), fingerprinter: fingerprinter() });
export const createDeps = () => ({
  creates: paymethodCreates(),
  oneTimeTokens: oneTimeTokenStore(),
  vault: vault(),
  fingerprinter: fingerprinter(),
  billingAgreements: billingAgreements(),
  organizations: organizationStore(),
  clock,
});
export const mintDeps = () => ({ oneTimeTokens: oneTimeTokenStore(), vault: vault(), clock });
export const oneTimeTokenReadDeps = () => ({ oneTimeTokens: oneTimeTokenStore(), clock });
