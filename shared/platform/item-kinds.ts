/**
 * The table partition-key prefix of each kind of item shared/store/keys.ts
 * builds. A function that writes the table declares the kinds it writes, and
 * its grant allows writes under these prefixes only (IAM's
 * `dynamodb:LeadingKeys`, shared/platform/dynamodb-grants.ts). No prefix starts
 * another, so a grant for one kind never reaches another. Imports nothing:
 * the route table, the stack and the store all read it.
 */
export const ITEM_PARTITION_PREFIXES = {
  organization: 'ORG#',
  credential: 'CRED#',
  authFailures: 'AUTHFAIL#',
  paymethod: 'MTH#',
  duplicateScope: 'DUP#',
  customerDefault: 'CST#',
  oneTimeToken: 'OTT#',
  publishableKey: 'PUBKEY#',
  mintCounter: 'RATE#',
  idempotency: 'IDEM#',
  pageBoundary: 'PAGE#',
  document: 'DOC#',
  documentHash: 'DOCSHA#',
  auHistory: 'AUHIST#',
  auMonth: 'AUMONTH#',
  auFile: 'AUFILE#',
  auDelivery: 'AUDELIVERY#',
  webhookEndpoint: 'WHE#',
  webhookLane: 'WHL#',
  webhookHeld: 'WHH#',
  webhookAttempt: 'WHA#',
  webhookSlot: 'WHS#',
  webhookParked: 'WHP#',
} as const;

export type ItemKind = keyof typeof ITEM_PARTITION_PREFIXES;
