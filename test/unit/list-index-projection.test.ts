import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES } from '#shared/store/keys.ts';
import { DynamoPaymethodStore, paymethodItemKeys, planQuery } from '#shared/store/paymethods.ts';
import { GLOBAL_SECONDARY_INDEXES, indexProjection } from '#shared/store/table.ts';

/**
 * The organization and location lists must never carry what the Account
 * Updater writes: an applied row would then rewrite the card's entry under
 * the organization's (or location's) single list key, once per row, and one
 * organization's run would be capped by that key (docs/account-updater.md).
 */
const card: Paymethod = {
  paymethod_token: 'mth_projection000000000000',
  organization_id: 'org_1',
  location_id: 'loc_1',
  customer_token: 'cst_1',
  customer_id: 'C-1',
  paymethod_type: 'card',
  card: { card_type: 'visa', name_on_card: 'Ann Lee', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
  is_default: true,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  version: 3,
};

type Update = { Key: Record<string, unknown>; UpdateExpression: string; ExpressionAttributeNames: Record<string, string> };

/**
 * The attribute names an Account Updater write sets or removes on the card, read from the
 * UpdateItem the store sends (alone, or inside the transaction a new fingerprint needs).
 */
async function attributesTheAccountUpdaterWrites(fingerprints?: { before: string; after: string }): Promise<{ set: string[]; removed: string[] }> {
  const sent: Update[] = [];
  const send = async (command: { input: Update | { TransactItems: Array<{ Update?: Update }> } }) => {
    const { input } = command;
    if ('TransactItems' in input) sent.push(...input.TransactItems.flatMap((item) => (item.Update && item.Update.Key.pk === `MTH#${card.paymethod_token}` ? [item.Update] : [])));
    else sent.push(input);
    return {};
  };
  const store = new DynamoPaymethodStore({ send } as unknown as DynamoDBDocumentClient, 'table');
  const current = fingerprints ? { ...card, card: { ...card.card!, fingerprint: fingerprints.before } } : card;
  const updated = { ...current.card!, last_4_account_number: '4242', masked_account_number: '****4242', expire_year: 2033, au_code: 'new' as const, au_description: 'New account number', au_updated_date: '2026-05-01T00:00:00.000Z', ...(fingerprints ? { fingerprint: fingerprints.after } : {}) };
  const secret = { v: 1 as const, key_id: 'key', encrypted_data_key: new Uint8Array(4), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };
  expect(await store.applyAccountUpdates([{ current, card: updated, secret, source: { file_id: 'f', line: 2, run_id: 'r', before: { card: current.card! } } }])).toEqual(['applied']);
  expect(sent).toHaveLength(1);
  const [{ UpdateExpression: expression, ExpressionAttributeNames: names }] = sent as [Update];
  const [setClause = '', removeClause = ''] = expression.replace(/^SET /, '').split(' REMOVE ');
  const nameOf = (term: string) => names[term.trim()] ?? term.trim();
  return {
    set: setClause.split(',').map((assignment) => nameOf(assignment.split('=')[0]!)),
    removed: removeClause ? removeClause.split(',').map(nameOf) : [],
  };
}

describe('paymethod list indexes', () => {
  const listIndexes = [planQuery({ organizationId: 'org_1' }).index, planQuery({ organizationId: 'org_1', locationId: 'loc_1' }).index];

  it('serve the organization and location lists, and project only named attributes', () => {
    expect(listIndexes).toEqual(['gsi9', 'gsi8']);
    for (const name of listIndexes) expect(indexProjection(name), name).not.toBe('ALL');
  });

  it.each([
    ['a card without a fingerprint (one UpdateItem)', undefined],
    ['a new number that moves the fingerprint (a transaction)', { before: 'fp_before', after: 'fp_after' }],
  ])('hold no attribute and no key the Account Updater writes: %s', async (_case, fingerprints) => {
    const { set, removed } = await attributesTheAccountUpdaterWrites(fingerprints);
    expect(set).toEqual(expect.arrayContaining(['card', 'version', 'updated_at', 'vault']));
    for (const name of listIndexes) {
      const index = GLOBAL_SECONDARY_INDEXES.find((candidate) => candidate.indexName === name)!;
      const carried = [index.partitionKey, index.sortKey, ...(indexProjection(name) as readonly string[])];
      expect(set.filter((attribute) => carried.includes(attribute)), name).toEqual([]);
      expect(removed.filter((attribute) => carried.includes(attribute)), name).toEqual([]);
    }
    // An item from before the list indexes moved leaves gsi1/gsi2 with its first Account Updater write.
    expect(removed).toEqual([...LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES]);
  });

  it('filter on nothing but what they project (a filter on anything else would need the items)', () => {
    const filtered = [planQuery({ organizationId: 'org_1', paymethodType: 'echeck' }), planQuery({ organizationId: 'org_1', locationId: 'loc_1', paymethodType: 'card' })];
    for (const plan of filtered) {
      expect(listIndexes).toContain(plan.index);
      for (const filter of plan.filters) expect(indexProjection(plan.index)).toContain(filter.attribute);
    }
  });

  it('are keyed on attributes a paymethod item carries, and gsi1/gsi2 no longer hold paymethods', () => {
    const itemKeys = Object.keys(paymethodItemKeys(card));
    expect(itemKeys).toEqual(expect.arrayContaining(['gsi8pk', 'gsi8sk', 'gsi9pk', 'gsi9sk']));
    for (const legacy of LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES) expect(itemKeys).not.toContain(legacy);
  });
});
