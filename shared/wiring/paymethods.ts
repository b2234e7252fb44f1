import { dynamo } from '#shared/aws/dynamodb.ts';
import { PaypalBillingAgreements, paypalCredentials } from '#shared/aws/paypal.ts';
import { config } from '#shared/runtime/config.ts';
import type { BillingAgreements } from '#shared/domain/paymethods/ports.ts';
import { DynamoOneTimeTokenStore } from '#shared/store/one-time-tokens.ts';
import { fingerprinter, paymethodStore, vault } from './card-data.ts';
import { once } from './once.ts';
import { organizationStore } from './organizations.ts';

export const oneTimeTokenStore = /* @__PURE__ */ once(() => new DynamoOneTimeTokenStore(dynamo, config.tableName));
export const billingAgreements = /* @__PURE__ */ once(
  (): BillingAgreements => new PaypalBillingAgreements({ apiUrl: config.paypalApiUrl, credentials: paypalCredentials(config.paypalCredentials) }),
);
export const clock = (): Date => new Date();

export const readDeps = () => ({ paymethods: paymethodStore() });
export const updateDeps = () => ({ paymethods: paymethodStore(), clock, vault: vault(), fingerprinter: fingerprinter() });
export const createDeps = () => ({
  paymethods: paymethodStore(),
  oneTimeTokens: oneTimeTokenStore(),
  vault: vault(),
  fingerprinter: fingerprinter(),
  billingAgreements: billingAgreements(),
  organizations: organizationStore(),
  clock,
});
export const mintDeps = () => ({ oneTimeTokens: oneTimeTokenStore(), vault: vault(), clock });
export const oneTimeTokenReadDeps = () => ({ oneTimeTokens: oneTimeTokenStore(), clock });
