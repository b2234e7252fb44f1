import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { call, MERCHANT, UNRELATED, useRuntimeEnvironment } from '../support/api.ts';
import { cardNumber } from '../support/card-numbers.ts';
import { npmScript } from '../support/cli.ts';
import { CARD, CARD_NUMBER, customerPath, ECHECK, ECHECK_NUMBER, expectError, locationPath, OTHER_CARD_NUMBER, post, unique } from '../support/paymethods.ts';

// Its own organization (scoped with --organization): the walk never touches records other tests write meanwhile.
const ORG = UNRELATED.organizationId;
const as = UNRELATED;
type Progress = { pages: number; found: number; written: number; changed: number; without_number: number; resume_token?: string };

const fingerprintOf = (body: Record<string, unknown>) => ((body.card ?? body.echeck) as { fingerprint?: string }).fingerprint;

async function backfill(...args: string[]): Promise<Progress> {
  const result = await npmScript('backfill-fingerprints', '--organization', ORG, ...args);
  expect(result.code, result.stderr).toBe(0);
  // One progress line per page on stderr, never a number or key.
  for (const line of result.stderr.trim().split('\n').filter(Boolean)) expect(Object.keys(JSON.parse(line) as object)).toContain('pages');
  expect(result.stderr + result.stdout).not.toContain(CARD_NUMBER);
  return JSON.parse(result.stdout) as Progress;
}

/** Writes a card or echeck the way the service did before fingerprints: through the repository, with no fingerprint. */
async function writeTheOldWay(kind: 'card' | 'echeck', location: string, customer: string): Promise<string> {
  const { vault } = await import('#shared/wiring/number-keys.ts');
  const paymethodStore = await runtimeStore();
  const token = unique('mth_');
  const now = new Date();
  const details =
    kind === 'card'
      ? { card: { card_type: 'visa' as const, name_on_card: 'Old', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 } }
      : { echeck: { account_holder: 'Old', last_4_account_number: '1012', masked_account_number: '****1012', routing_number: ECHECK.routing_number, sec_code: 'WEB' as const } };
  const record: Omit<Paymethod, 'is_default' | 'version'> = {
    paymethod_token: token,
    organization_id: ORG,
    location_id: location,
    customer_token: customer,
    paymethod_type: kind,
    ...details,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
  const secret = await vault().seal(kind === 'card' ? CARD_NUMBER : ECHECK_NUMBER, { organizationId: ORG, recordToken: token });
  await paymethodStore.create(record, secret, { now });
  return token;
}

describe('fingerprint backfill', () => {
  const loc = unique('loc_');
  const cst = unique('cst_');
  let card: string;
  let echeck: string;

  beforeAll(async () => {
    useRuntimeEnvironment();
    card = await writeTheOldWay('card', loc, cst);
    echeck = await writeTheOldWay('echeck', loc, cst);
  });

  it('gives old records their fingerprint, resumably; a second run changes nothing; the duplicate check then sees them', async () => {
    const get = async (token: string) => (await call(`${locationPath(ORG, loc)}/paymethods/${token}`, { as })).body;
    expect(fingerprintOf(await get(card))).toBeUndefined();
    // A duplicate check cannot see a record the backfill has not reached yet.
    const early = await post(customerPath(ORG, loc, cst), { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER }, fail_on_duplicate: true }, { as });
    expect(early.status, early.text).toBe(201);

    const first = await backfill('--page-size', '3', '--max-pages', '1');
    expect(first.pages).toBe(1);
    expect(first.resume_token).toMatch(/^[A-Za-z0-9_-]+$/);
    const rest = await backfill('--resume', first.resume_token!, '--page-size', '200');
    expect(rest.resume_token).toBeUndefined();
    expect(first.written + rest.written).toBeGreaterThanOrEqual(2);

    // Equal to what a create of the same number computes now.
    const fresh = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: CARD }, { as });
    const freshEcheck = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { echeck: ECHECK }, { as });
    const backfilledCard = await get(card);
    expect(fingerprintOf(backfilledCard)).toBe(fingerprintOf(fresh.body));
    expect(fingerprintOf(await get(echeck))).toBe(fingerprintOf(freshEcheck.body));
    expect(backfilledCard.card).toMatchObject({ name_on_card: 'Old', masked_account_number: '****1111' });

    const again = await backfill('--page-size', '500');
    expect(again.written).toBe(0);
    expect(fingerprintOf(await get(card))).toBe(fingerprintOf(fresh.body));

    const refused = await post(customerPath(ORG, loc, cst), { card: CARD, fail_on_duplicate: true }, { as });
    expectError(refused, 409, ['card.account_number']);
    expect(refused.text).toContain(card);
    const filtered = await call(`${locationPath(ORG, loc)}/paymethods?filter=${encodeURIComponent(`fingerprint eq '${fingerprintOf(fresh.body)}'`)}`, { as });
    expect((filtered.body.results as Array<{ paymethod_token: string }>).map((item) => item.paymethod_token)).toEqual([card]);
  });

  it('refuses a bad option with a usage error', async () => {
    const result = await npmScript('backfill-fingerprints', '--page-size', '0');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--page-size');
  });
});

describe('Account Updater new numbers', () => {
  it('refresh the fingerprint, its filter key and the duplicate check', async () => {
    const ORG = MERCHANT.organizationId;
    const loc = unique('loc_');
    const cst = unique('cst_');
    const created = await post(customerPath(ORG, loc, cst), { card: CARD });
    const token = String(created.body.paymethod_token);
    // A visa number, as the card's: a network refreshes a card within its brand.
    const renewed = '4012888888881881';
    const newNumber = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: { ...CARD, account_number: renewed } });
    const dir = await mkdtemp(path.join(tmpdir(), 'fp-au-'));
    try {
      const file = path.join(dir, 'updates.csv');
      await writeFile(file, `paymethod_token,au_code,account_number,expire_month,expire_year\n${token},new,${renewed},,\n`);
      const result = await npmScript('au:apply', file, '--org', ORG);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ applied: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const after = await call(`${locationPath(ORG, loc)}/paymethods/${token}`);
    expect(fingerprintOf(after.body)).toBe(fingerprintOf(newNumber.body));
    const byNew = await call(`${locationPath(ORG, loc)}/paymethods?filter=${encodeURIComponent(`fingerprint eq '${fingerprintOf(newNumber.body)}'`)}`);
    expect((byNew.body.results as Array<{ paymethod_token: string }>).map((item) => item.paymethod_token)).toEqual([token]);
    // The customer no longer holds the old number, and now holds the new one.
    expect((await post(customerPath(ORG, loc, cst), { card: CARD, fail_on_duplicate: true })).status).toBe(201);
    expectError(await post(customerPath(ORG, loc, cst), { card: { ...CARD, account_number: renewed }, fail_on_duplicate: true }), 409);
  });

  it('undone by a later line take back, from a card not yet fingerprinted, the fingerprint, its filter key and its place in the duplicate check', async () => {
    // The domain decides the card the later line leaves (unit-tested); this is the store committing it.
    useRuntimeEnvironment();
    const loc = unique('loc_');
    const cst = unique('cst_');
    const token = await writeTheOldWay('card', loc, cst);
    const other = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER } }, { as });
    const newFingerprint = fingerprintOf(other.body)!;
    const { vault } = await import('#shared/wiring/number-keys.ts');
    const store = await runtimeStore();
    const appliedAt = new Date().toISOString();
    const original = (await store.findCards([token])).get(token)!;
    const before = { card: original.paymethod.card! };
    const secret = await vault().seal(OTHER_CARD_NUMBER, { organizationId: ORG, recordToken: token });
    const renumbered = { ...before.card, last_4_account_number: OTHER_CARD_NUMBER.slice(-4), masked_account_number: `****${OTHER_CARD_NUMBER.slice(-4)}`, fingerprint: newFingerprint, au_code: 'new' as const, au_description: 'New account number', au_updated_date: appliedAt };
    expect(await store.applyAccountUpdates([{ current: original.paymethod, card: renumbered, secret, source: { file_id: 'f', line: 2, run_id: 'r', before }, updatedAt: appliedAt }])).toEqual(['applied']);
    expectError(await post(customerPath(ORG, loc, cst), { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER }, fail_on_duplicate: true }, { as }), 409);

    const renumberedCard = (await store.findCards([token])).get(token)!;
    const { fingerprint: _undone, ...restored } = { ...renumberedCard.paymethod.card!, ...before.card, expire_month: 5, expire_year: 2033, au_code: 'exp' as const, au_description: 'New expiration date', au_updated_date: appliedAt };
    const change = { current: renumberedCard.paymethod, card: restored, secret: original.secret!, source: { file_id: 'f', line: 3, run_id: 'r', before, applied_lines: [2, 3] }, updatedAt: appliedAt };
    expect(await store.applyAccountUpdates([change])).toEqual(['applied']);

    const after = await call(`${locationPath(ORG, loc)}/paymethods/${token}`, { as });
    expect(after.body.card).toMatchObject({ masked_account_number: '****1111', expire_year: 2033 });
    expect(fingerprintOf(after.body)).toBeUndefined();
    const byUndone = await call(`${locationPath(ORG, loc)}/paymethods?filter=${encodeURIComponent(`fingerprint eq '${newFingerprint}'`)}`, { as });
    expect(byUndone.body.results).toEqual([]);
    expect((await post(customerPath(ORG, loc, cst), { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER }, fail_on_duplicate: true }, { as })).status).toBe(201);
  });

  /** A new number for the card as it is now, as a file's row brings it, and the card it leaves (its old fingerprint). */
  async function renumber(token: string, number: string) {
    const { vault } = await import('#shared/wiring/number-keys.ts');
    const paymethodStore = await runtimeStore();
    const { fingerprinter } = await import('#shared/wiring/account-updater.ts').then((module) => module.batchDeps());
    const { paymethod } = (await paymethodStore.findCards([token])).get(token)!;
    const appliedAt = new Date().toISOString();
    const card = { ...paymethod.card!, last_4_account_number: number.slice(-4), masked_account_number: `****${number.slice(-4)}`, au_code: 'new' as const, au_description: 'New account number', au_updated_date: appliedAt, fingerprint: await fingerprinter.fingerprint(paymethod.organization_id, { kind: 'card', accountNumber: number }) };
    const secret = await vault().seal(number, { organizationId: paymethod.organization_id, recordToken: token });
    const change = { current: paymethod, card, secret, source: { file_id: 'direct', line: 2, run_id: unique('run'), before: { card: paymethod.card! } }, updatedAt: appliedAt };
    expect(await paymethodStore.applyAccountUpdates([change])).toEqual(['applied']);
    return paymethod;
  }

  /** The tokens a duplicate-scope entry names, read straight from the table. */
  async function entryMembers(record: Paymethod): Promise<string[]> {
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { config } = await import('#shared/runtime/config.ts');
    const { keys } = await import('#shared/store/keys.ts');
    const scope = record.customer_token ? `CST#${record.customer_token}` : `LOC#${record.location_id}`;
    const { Item } = await dynamo.send(new GetCommand({ TableName: config.tableName, Key: keys.duplicateScope(record.organization_id, scope, record.card!.fingerprint!), ConsistentRead: true }));
    return [...((Item?.tokens as Set<string> | undefined) ?? [])].sort();
  }

  /** A customer's card that a file took from CARD_NUMBER to OTHER_CARD_NUMBER: a former holder of its first entry. */
  async function formerHolder() {
    const loc = unique('loc_');
    const cst = unique('cst_');
    const token = String((await post(customerPath(ORG, loc, cst), { card: CARD }, { as })).body.paymethod_token);
    return { loc, cst, token, before: await renumber(token, OTHER_CARD_NUMBER) };
  }

  /** The repository over the runtime's table, `around` each request its client sends. */
  async function storeAround(around: (command: object, send: () => Promise<unknown>) => Promise<unknown>) {
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { config } = await import('#shared/runtime/config.ts');
    const { paymethodStore } = await import('../support/paymethod-store.ts');
    const client = { send: (command: Parameters<typeof dynamo.send>[0]) => around(command, () => dynamo.send(command)) } as unknown as typeof dynamo;
    return paymethodStore(client, config.tableName);
  }

  /** A record like `like` under a token of its own, as the repository's create takes it. */
  function sameNumber(like: Paymethod) {
    const now = new Date();
    const { is_default: _default, version: _version, ...record } = { ...like, paymethod_token: unique('mth_'), created_at: now.toISOString(), updated_at: now.toISOString() };
    return { record, now };
  }

  it('join their new entry and leave the old one naming the card, until a flagged create finds it a former holder and takes it out', async () => {
    useRuntimeEnvironment();
    const { loc, cst, token, before } = await formerHolder();
    // One write fewer per new number: the card stays in its old entry, no longer holding its fingerprint.
    expect(await entryMembers(before)).toEqual([token]);
    const again = await post(customerPath(ORG, loc, cst), { card: CARD, fail_on_duplicate: true }, { as });
    expect(again.status).toBe(201);
    expect(await entryMembers(before)).toEqual([String(again.body.paymethod_token)]);
    expectError(await post(customerPath(ORG, loc, cst), { card: { ...CARD, card_type: 'mast', account_number: OTHER_CARD_NUMBER }, fail_on_duplicate: true }, { as }), 409);

    // A former holder deleted since is taken out too.
    const gone = await formerHolder();
    expect((await call(`${locationPath(ORG, gone.loc)}/paymethods/${gone.token}`, { method: 'DELETE', as })).status).toBe(200);
    expect(await entryMembers(gone.before)).toEqual([gone.token]);
    const after = await post(customerPath(ORG, gone.loc, gone.cst), { card: CARD, fail_on_duplicate: true }, { as });
    expect(after.status).toBe(201);
    expect(await entryMembers(gone.before)).toEqual([String(after.body.paymethod_token)]);
  });

  it('keep a former holder in its entry when it takes the fingerprint back while a flagged create checks it', async () => {
    useRuntimeEnvironment();
    const { BatchGetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { token, before } = await formerHolder();
    // The create reads the entry's members; right after that read, and before it acts on it, a later file
    // gives the card its first number back (which joins an entry that already names it).
    let raced = false;
    const store = await storeAround(async (command, send) => {
      const output = await send();
      if (command instanceof BatchGetCommand && !raced) {
        raced = true;
        await renumber(token, CARD_NUMBER);
      }
      return output;
    });
    const { record, now } = sameNumber(before);
    await expect(store.create(record, undefined, { now, failOnDuplicate: true })).rejects.toMatchObject({ code: 'DUPLICATE_PAYMETHOD', message: expect.stringContaining(token) });
    expect(raced).toBe(true);
    expect(await entryMembers(before)).toEqual([token]);
  });

  it('cost a refused flagged create no more than two reads however many paymethods hold the number', async () => {
    useRuntimeEnvironment();
    const { BatchGetCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const paymethodStore = await runtimeStore();
    // 30 paymethods without a customer at one location, all the same card (created without the flag: all allowed).
    const first = await post(`${locationPath(ORG, unique('loc_'))}/paymethods`, { card: CARD }, { as });
    const like = (await paymethodStore.get(String(first.body.paymethod_token)))!;
    await Promise.all(
      Array.from({ length: 29 }, () => {
        const { record, now } = sameNumber(like);
        return paymethodStore.create(record, undefined, { now });
      }),
    );
    const reads: string[] = [];
    const store = await storeAround((command, send) => {
      if (command instanceof GetCommand) reads.push('GetItem');
      if (command instanceof BatchGetCommand) reads.push(`BatchGetItem of ${Object.values(command.input.RequestItems!)[0]!.Keys!.length}`);
      return send();
    });
    const { record, now } = sameNumber(like);
    await expect(store.create(record, undefined, { now, failOnDuplicate: true })).rejects.toMatchObject({ code: 'DUPLICATE_PAYMETHOD' });
    expect(reads).toEqual(['GetItem', 'BatchGetItem of 10']);
  });

  it('do not use up a flagged create\'s attempts when a former holder changes twice while it checks', async () => {
    useRuntimeEnvironment();
    const { TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const paymethodStore = await runtimeStore();
    const { token, before } = await formerHolder();
    // Right before each of the first two releases, the merchant edits the former holder (a label: not its number).
    let edits = 0;
    const store = await storeAround(async (command, send) => {
      const releasing = command instanceof TransactWriteCommand && command.input.TransactItems!.some((item) => item.ConditionCheck?.Key?.pk === keys.paymethod(token).pk);
      if (releasing && edits < 2) {
        edits += 1;
        const current = (await paymethodStore.get(token))!;
        await paymethodStore.update(current, { ...current, label: `edit ${edits}` });
      }
      return send();
    });
    const { record, now } = sameNumber(before);
    const created = await store.create(record, undefined, { now, failOnDuplicate: true });
    expect(edits).toBe(2);
    expect(created.paymethod_token).toBe(record.paymethod_token);
    expect(await entryMembers(before)).toEqual([record.paymethod_token]);
  });

  it('commit many at once: cards sharing a duplicate-scope entry, and a stale card, each settle on their own', async () => {
    useRuntimeEnvironment();
    const ORG = MERCHANT.organizationId;
    const loc = unique('loc_');
    const cst = unique('cst_');
    // Two cards of one customer with the same number share one duplicate-scope entry, which two
    // moves may not both write in one transaction; 18 more make the file's new numbers span two groups.
    const shared = [await post(customerPath(ORG, loc, cst), { card: CARD }), await post(customerPath(ORG, loc, cst), { card: CARD })];
    const others = await Promise.all(Array.from({ length: 18 }, (_unused, index) => post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, account_number: cardNumber(`4000${String(index).padStart(4, '0')}`) } })));
    const tokens = [...shared, ...others].map((created) => String(created.body.paymethod_token));
    const newNumbers = tokens.map((_token, index) => cardNumber(`4999${String(index).padStart(4, '0')}`));
    const dir = await mkdtemp(path.join(tmpdir(), 'fp-au-'));
    try {
      const file = path.join(dir, 'updates.csv');
      await writeFile(file, ['paymethod_token,au_code,account_number,expire_month,expire_year', ...tokens.map((token, index) => `${token},new,${newNumbers[index]},,`)].join('\n'));
      const result = await npmScript('au:apply', file, '--org', ORG);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ applied: 20, error_count: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // Both left the shared entry; every card holds its new number in its own scope.
    expect((await post(customerPath(ORG, loc, cst), { card: CARD, fail_on_duplicate: true })).status).toBe(201);
    for (const index of [0, 1]) expectError(await post(customerPath(ORG, loc, cst), { card: { ...CARD, account_number: newNumbers[index] }, fail_on_duplicate: true }), 409);
    for (const index of [2, 19]) expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, account_number: newNumbers[index] }, fail_on_duplicate: true }), 409);

    // One call with a card read before it changed: that change is a conflict, the other commits.
    const { vault } = await import('#shared/wiring/number-keys.ts');
    const paymethodStore = await runtimeStore();
    const { fingerprinter } = await import('#shared/wiring/account-updater.ts').then((module) => module.batchDeps());
    const found = await paymethodStore.findCards([tokens[2]!, tokens[3]!]);
    const change = async (token: string, number: string, version: number) => {
      const { paymethod } = found.get(token)!;
      const current = { ...paymethod, version };
      const card = { ...paymethod.card!, last_4_account_number: number.slice(-4), masked_account_number: `****${number.slice(-4)}`, au_code: 'new' as const, au_description: 'New account number', au_updated_date: new Date().toISOString(), fingerprint: await fingerprinter.fingerprint(ORG, { kind: 'card', accountNumber: number }) };
      const secret = await vault().seal(number, { organizationId: ORG, recordToken: token });
      return { current, card, secret, source: { file_id: 'direct', line: 2, run_id: 'direct', before: { card: paymethod.card! } }, updatedAt: card.au_updated_date! };
    };
    const stale = found.get(tokens[2]!)!.paymethod.version - 1;
    const again = [cardNumber('49980001'), cardNumber('49980002')];
    expect(await paymethodStore.applyAccountUpdates([await change(tokens[2]!, again[0]!, stale), await change(tokens[3]!, again[1]!, found.get(tokens[3]!)!.paymethod.version)])).toEqual(['conflict', 'applied']);
    expect((await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, account_number: again[0] }, fail_on_duplicate: true })).status).toBe(201);
    expectError(await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, account_number: again[1] }, fail_on_duplicate: true }), 409);
    expect((await post(`${locationPath(ORG, loc)}/paymethods`, { card: { ...CARD, account_number: newNumbers[3] }, fail_on_duplicate: true })).status).toBe(201);
  });
});

/** Every protocol of the paymethod store over the runtime's table, as the wiring builds them. */
async function runtimeStore() {
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { config } = await import('#shared/runtime/config.ts');
  const { paymethodStore } = await import('../support/paymethod-store.ts');
  return paymethodStore(dynamo, config.tableName, config.tableIndexStandIns);
}
