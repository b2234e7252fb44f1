import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES } from '#shared/store/keys.ts';
import { paymethodItem, paymethodItemKeys } from '#shared/store/paymethod-item.ts';
import { answersPlan, planQuery } from '#shared/store/paymethod-queries.ts';
import { paymethodStore } from '../support/paymethod-store.ts';
import type { PaymethodQuery } from '#shared/domain/paymethods/ports.ts';
import { encodeCursor, queryFingerprint } from '#shared/store/cursor.ts';
import { GLOBAL_SECONDARY_INDEXES, RETIRED_INDEXES, indexProjection, parseIndexStandIns } from '#shared/platform/table.ts';
import type { IndexName, RetiredIndexName } from '#shared/platform/table.ts';

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
  const store = paymethodStore({ send } as unknown as DynamoDBDocumentClient, 'table');
  const current = fingerprints ? { ...card, card: { ...card.card!, fingerprint: fingerprints.before } } : card;
  const updated = { ...current.card!, last_4_account_number: '4242', masked_account_number: '****4242', expire_year: 2033, au_code: 'new' as const, au_description: 'New account number', au_updated_date: '2026-05-01T00:00:00.000Z', ...(fingerprints ? { fingerprint: fingerprints.after } : {}) };
  const secret = { v: 1 as const, key_id: 'key', encrypted_data_key: new Uint8Array(4), iv: new Uint8Array(12), ciphertext: new Uint8Array(16), tag: new Uint8Array(16) };
  expect(await store.applyAccountUpdates([{ current, card: updated, secret, source: { file_id: 'f', line: 2, run_id: 'r', before: { card: current.card! } }, updatedAt: updated.au_updated_date }])).toEqual(['applied']);
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

describe('report, customer_id and fingerprint indexes', () => {
  const narrowed = ['gsi10', 'gsi11', 'gsi12', 'gsi13'] as const;
  const carried = (name: IndexName | RetiredIndexName): readonly string[] => {
    const index = [...GLOBAL_SECONDARY_INDEXES, ...RETIRED_INDEXES].find((candidate) => candidate.indexName === name)!;
    return [index.partitionKey, index.sortKey, ...(index.projection === 'ALL' ? [] : index.projection)];
  };

  it('replace ALL indexes over the same keys, so DynamoDB fills them from the items as they are', () => {
    expect(RETIRED_INDEXES.map((retired) => retired.successor)).toEqual([...narrowed]);
    for (const retired of RETIRED_INDEXES) {
      const successor = GLOBAL_SECONDARY_INDEXES.find((index) => index.indexName === retired.successor)!;
      expect([successor.partitionKey, successor.sortKey], successor.indexName).toEqual([retired.partitionKey, retired.sortKey]);
      expect(successor.projection, successor.indexName).not.toBe('ALL');
      expect(successor.projection, successor.indexName).toContain('paymethod_token');
    }
  });

  it('carry every attribute any list filters on: every combination of filters, on every index that serves one', () => {
    const optional: Array<Partial<PaymethodQuery>> = [
      { locationId: 'loc_1' },
      { customerToken: 'cst_1' },
      { customerId: 'C-1' },
      { paymethodType: 'card' },
      { fingerprint: 'fp_1' },
      { auUpdatedFrom: '2026-05-01' },
    ];
    const served = new Set<string>();
    for (let mask = 0; mask < 1 << optional.length; mask += 1) {
      const query = Object.assign({ organizationId: 'org_1' }, ...optional.filter((_part, bit) => mask & (1 << bit))) as PaymethodQuery;
      const plan = planQuery(query);
      served.add(plan.index);
      if (indexProjection(plan.index) === 'ALL') continue;
      for (const filter of plan.filters) expect(carried(plan.index), `${plan.index} ${JSON.stringify(query)}`).toContain(filter.attribute);
    }
    expect([...served].sort()).toEqual(['gsi10', 'gsi11', 'gsi12', 'gsi13', 'gsi3', 'gsi8', 'gsi9']);
  });

  it('take no write from an expiry, and the customer_id index none from a new number', async () => {
    const expiry = await attributesTheAccountUpdaterWrites();
    for (const name of ['gsi12', 'gsi13'] as const) {
      expect([...expiry.set, ...expiry.removed].filter((attribute) => carried(name).includes(attribute)), name).toEqual([]);
    }
    const newNumber = await attributesTheAccountUpdaterWrites({ before: 'fp_before', after: 'fp_after' });
    expect([...newNumber.set, ...newNumber.removed].filter((attribute) => carried('gsi12').includes(attribute))).toEqual([]);
    expect(newNumber.set).toContain('gsi7pk'); // the fingerprint entry moves, as it must
  });

  it('are read through a retired index standing in while an upgrade withholds them, with the same cursors', async () => {
    const entry = { ...paymethodItemKeys(card), pk: `MTH#${card.paymethod_token}`, sk: 'MTH', entity: 'paymethod', ...card, gsi7pk: 'FP#org_1#fp_1', gsi7sk: `${card.created_at}#${card.paymethod_token}` };
    const sent: Array<{ name: string; input: Record<string, unknown> }> = [];
    const client = {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        sent.push({ name: command.constructor.name, input: command.input });
        return command.constructor.name === 'QueryCommand' ? { Items: [entry, { ...entry, paymethod_token: 'mth_projection000000000001' }] } : { Responses: { table: [entry] } };
      },
    } as unknown as DynamoDBDocumentClient;
    const query: PaymethodQuery = { organizationId: 'org_1', fingerprint: 'fp_1' };
    const upgrading = await paymethodStore(client, 'table', 'gsi13=gsi7').list(query, { pageSize: 1, pageIndex: 0 });
    expect(sent.map(({ name, input }) => [name, input.IndexName])).toEqual([['QueryCommand', 'gsi7']]); // ALL: the entries are the records
    sent.length = 0;
    const upgraded = await paymethodStore(client, 'table').list(query, { pageSize: 1, pageIndex: 0 });
    expect(sent.map(({ name, input }) => [name, input.IndexName])).toEqual([['QueryCommand', 'gsi13'], ['BatchGetCommand', undefined]]);
    expect(upgraded.items.map((item) => item.paymethod_token)).toEqual(upgrading.items.map((item) => item.paymethod_token));
    expect(upgraded.nextCursor).toBe(upgrading.nextCursor);
    // And the cursor the release before (reading gsi7 itself) gave for the same page: its query's fingerprint holds.
    const before = encodeCursor({ token: card.paymethod_token, sortValue: entry.gsi7sk, pageIndex: 1, pageSize: 1 }, queryFingerprint(['gsi7', 'FP#org_1#fp_1', undefined, undefined, []]));
    expect(upgraded.nextCursor).toBe(before);
  });

  /** A store whose index answers with `entries` and whose table then holds `items`: the index lagging its table. */
  const lagging = (entries: Paymethod[], items: Paymethod[]) => {
    const client = {
      send: async (command: { constructor: { name: string } }) =>
        command.constructor.name === 'QueryCommand'
          ? { Items: entries.map((record) => paymethodItem(record, undefined)) }
          : { Responses: { table: items.map((record) => paymethodItem(record, undefined)) } },
    } as unknown as DynamoDBDocumentClient;
    return paymethodStore(client, 'table');
  };
  const other = { ...card, paymethod_token: 'mth_projection000000000001', created_at: '2025-12-01T00:00:00.000Z' };

  it.each([
    ['a customer_id changed', { organizationId: 'org_1', customerId: 'C-1' }, { customer_id: 'C-2' }, {}],
    ['a fingerprint changed by a new number', { organizationId: 'org_1', fingerprint: 'fp_1' }, { fingerprint: 'fp_2' }, { fingerprint: 'fp_1' }],
    [
      'an Account Updater date moved past the range',
      { organizationId: 'org_1', auUpdatedFrom: '2026-05-01', auUpdatedTo: '2026-05-31' },
      { au_updated_date: '2026-06-02T08:00:00.000Z' },
      { au_updated_date: '2026-05-02T08:00:00.000Z' },
    ],
  ] as const)('leave out a record read after its index entry that no longer answers the query: %s', async (_case, query, change, cardAsIndexed) => {
    const asIndexed = (record: Paymethod): Paymethod => ({ ...record, card: { ...record.card!, ...cardAsIndexed } });
    const moved = (record: Paymethod): Paymethod => {
      const { customer_id: customerId, ...cardChange } = change as { customer_id?: string } & Record<string, string>;
      return { ...record, ...(customerId ? { customer_id: customerId } : {}), card: { ...record.card!, ...cardAsIndexed, ...cardChange } };
    };
    const entries = [asIndexed(card), asIndexed(other)];
    const unchanged = await lagging(entries, entries).list(query, { pageSize: 2, pageIndex: 0 });
    expect(unchanged.items.map((item) => item.paymethod_token)).toEqual([card.paymethod_token, other.paymethod_token]);
    const page = await lagging(entries, [moved(card), asIndexed(other)]).list(query, { pageSize: 2, pageIndex: 0 });
    expect(page.items.map((item) => item.paymethod_token)).toEqual([other.paymethod_token]);
  });

  it('answer a query with a record exactly when the record holds every member the query names', () => {
    const month = (date: string) => ({ from: `${date.slice(0, 7)}-01`, to: `${date.slice(0, 7)}-28` });
    const values = {
      location_id: ['loc_1', 'loc_2'],
      customer_token: ['cst_1', 'cst_2'],
      customer_id: ['C-1', 'C-2'],
      fingerprint: ['fp_1', 'fp_2'],
      au_updated_date: ['2026-05-10T10:00:00.000Z', '2026-06-10T10:00:00.000Z'],
    } as const;
    type Member = keyof typeof values;
    const members = Object.keys(values) as Member[];
    const record = fc.record(Object.fromEntries(members.map((member) => [member, fc.option(fc.constantFrom(...values[member]), { nil: undefined })])) as { [M in Member]: fc.Arbitrary<string | undefined> });
    const build = (held: Partial<Record<Member, string>>): Paymethod => ({
      ...card,
      location_id: held.location_id,
      customer_token: held.customer_token,
      customer_id: held.customer_id,
      card: { ...card.card!, fingerprint: held.fingerprint, au_updated_date: held.au_updated_date },
    });
    const queryFor = (held: Partial<Record<Member, string>>, named: Member[]): PaymethodQuery => ({
      organizationId: 'org_1',
      ...(named.includes('location_id') ? { locationId: held.location_id } : {}),
      ...(named.includes('customer_token') ? { customerToken: held.customer_token } : {}),
      ...(named.includes('customer_id') ? { customerId: held.customer_id } : {}),
      ...(named.includes('fingerprint') ? { fingerprint: held.fingerprint } : {}),
      ...(named.includes('au_updated_date') && held.au_updated_date ? { auUpdatedFrom: month(held.au_updated_date).from, auUpdatedTo: month(held.au_updated_date).to } : {}),
    });
    fc.assert(
      fc.property(record, fc.subarray(members), fc.nat(), (held, wanted, pick) => {
        const named = wanted.filter((member) => held[member] !== undefined);
        const plan = planQuery(queryFor(held, named));
        expect(answersPlan(paymethodItem(build(held), undefined), plan)).toBe(true);
        if (named.length === 0) return;
        // The record moves away from one member the query names: to the other value, or to none.
        const member = named[pick % named.length]!;
        const away = pick % 2 === 0 ? values[member].find((value) => value !== held[member]) : undefined;
        expect(answersPlan(paymethodItem(build({ ...held, [member]: away }), undefined), plan)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('take stand-ins only as a retired index and its own successor', () => {
    expect(parseIndexStandIns('gsi10=gsi4,gsi13=gsi7')).toEqual({ gsi10: 'gsi4', gsi13: 'gsi7' });
    expect(parseIndexStandIns(undefined)).toEqual({});
    expect(() => parseIndexStandIns('gsi10=gsi5')).toThrow(/gsi10=gsi5/);
    expect(() => parseIndexStandIns('gsi3=gsi4')).toThrow(/gsi3=gsi4/);
    expect(() => parseIndexStandIns('gsi10=gsi4=junk')).toThrow(/gsi10=gsi4=junk/);
    expect(parseIndexStandIns(' gsi10 = gsi4 , gsi13=gsi7,')).toEqual({ gsi10: 'gsi4', gsi13: 'gsi7' });
  });

  it('refuse a mistaken stand-in setting in the lists alone: every other route still answers', async () => {
    const client = {
      send: async (command: { constructor: { name: string } }) => (command.constructor.name === 'GetCommand' ? { Item: paymethodItem(card, undefined) } : { Items: [] }),
    } as unknown as DynamoDBDocumentClient;
    const store = paymethodStore(client, 'table', 'gsi10=gsi5');
    expect((await store.get(card.paymethod_token))?.paymethod_token).toBe(card.paymethod_token);
    await expect(store.list({ organizationId: 'org_1', customerId: 'C-1' }, { pageSize: 1, pageIndex: 0 })).rejects.toThrow(/gsi10=gsi5/);
  });
});
