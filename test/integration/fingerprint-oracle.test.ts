/**
 * The fingerprint oracle of issue 36, replayed: given a stored card's
 * fingerprint, its first eight and its last four digits, an attacker mints
 * one-time tokens for the candidate numbers (the Luhn check leaves about 1,000)
 * and watches for the fingerprint. Minting stores no paymethod, so it must
 * compute no fingerprint, with the public publishable key or with secret
 * credentials; the paymethod made from a token still gets the right one.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { ApiAnswer } from '../support/api.ts';
import { call, MERCHANT, useRuntimeEnvironment } from '../support/api.ts';
import { cardNumber } from '../support/card-numbers.ts';
import { CARD, customerPath, expectError, locationPath, post, unique } from '../support/paymethods.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const ORG = MERCHANT.organizationId;
const SHOP = 'https://shop.example';
/** Candidates minted per credential kind (the true number among them); the issue's attack needed 900. */
const CANDIDATES = 120;

/** A stored card's number, fingerprint, first eight and last four: what the attacker starts from. */
interface Victim {
  number: string;
  fingerprint: string;
}

/** Every 16-digit number with the victim's first eight and last four that passes the Luhn check, the victim's first. */
function candidatesFor(victim: string, count: number): string[] {
  const found = [victim];
  for (let middle = 0; middle < 10_000 && found.length < count; middle += 1) {
    const candidate = `${victim.slice(0, 8)}${String(middle).padStart(4, '0')}${victim.slice(12)}`;
    if (candidate !== victim && cardNumber(candidate.slice(0, 15)) === candidate) found.push(candidate);
  }
  return found;
}

/** Runs `task` over `items`, a few at a time (the local runtime shares two cores). */
async function inBatches<T, R>(items: readonly T[], task: (item: T) => Promise<R>, width = 6): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += width) results.push(...(await Promise.all(items.slice(start, start + width).map(task))));
  return results;
}

/** Every `fp_` value and every `fingerprint` member anywhere in an answer. */
function fingerprintsIn(answer: ApiAnswer): string[] {
  const values = answer.text.match(/fp_[A-Za-z0-9_-]{43}/g) ?? [];
  return answer.text.includes('fingerprint') ? [...values, 'a fingerprint member'] : values;
}

async function storedToken(token: string): Promise<Record<string, unknown> | undefined> {
  const environment = useRuntimeEnvironment();
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const { Item } = await dynamo.send(new GetCommand({ TableName: environment.TABLE_NAME, Key: keys.oneTimeToken(token), ConsistentRead: true }));
  return Item;
}

describe('docs/vault.md on the attack', () => {
  it('states the candidate count the Luhn check leaves and the mints this file replays', () => {
    const vault = readFileSync(path.join(repoRoot, 'docs/vault.md'), 'utf8').replace(/\s+/g, ' ');
    // Four unknown middle digits: the check digit fixes one residue in ten, whatever the first eight and last four.
    for (const known of ['4111111111111111', '5555555555554444', cardNumber('45678901')]) expect(candidatesFor(known, 10_000), known).toHaveLength(1_000);
    expect(vault).toContain('the Luhn check leaves exactly 1,000 of them');
    expect(vault).toContain(`${CANDIDATES} candidate mints each, the true number among them, learn 0 fingerprints`);
  });
});

describe('no fingerprint oracle: minting tokens for candidate numbers learns nothing', () => {
  let victim: Victim;
  let loc: string;
  let publishableKey: string;

  beforeAll(async () => {
    loc = unique('loc_');
    const number = cardNumber(`4${String(Date.now()).slice(-8)}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`);
    const stored = await post(customerPath(ORG, loc, unique('cst_')), { card: { ...CARD, account_number: number } });
    expect(stored.status, stored.text).toBe(201);
    victim = { number, fingerprint: (stored.body.card as { fingerprint: string }).fingerprint };
    expect(victim.fingerprint).toMatch(/^fp_/);
    // The highest budget a key can have: the attack is not slowed by the per-key limit here.
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '--silent', 'admin', '--', 'create-publishable-key', ORG, loc, '--origin', SHOP, '--mints-per-minute', '1000'],
      { cwd: repoRoot, env: { ...process.env, PORT: String(inject('runtimePort')) } },
    );
    publishableKey = (JSON.parse(stdout) as { publishable_key: string }).publishable_key;
  }, 120_000);

  const kinds = {
    'the publishable key': () => ({ as: null, headers: { Authorization: `Bearer ${publishableKey}`, 'X-Service-Auth-Organization-Id': ORG, Origin: SHOP } }),
    'secret credentials': () => ({}),
  } as const;

  for (const [kind, credentials] of Object.entries(kinds)) {
    it(`with ${kind}: ${CANDIDATES} candidate mints (the true number among them) give 0 fingerprints, in answers and stored tokens`, async () => {
      const candidates = candidatesFor(victim.number, CANDIDATES);
      expect(candidates).toHaveLength(CANDIDATES);
      const started = performance.now();
      const minted = await inBatches(candidates, (number) => post(`${locationPath(ORG, loc)}/onetimetokens`, { card: { ...CARD, account_number: number } }, credentials()));
      const minutes = (performance.now() - started) / 60_000;
      for (const answer of minted) expect(answer.status, answer.text).toBe(201);
      // The server can read a token back: that answer carries none either.
      const tokens = minted.map((answer) => String(answer.body.one_time_token));
      const readBack = await inBatches(tokens, (token) => call(`${locationPath(ORG, loc)}/onetimetokens/${token}`));
      for (const answer of readBack) expect(answer.status, answer.text).toBe(200);
      const learned = new Set([...minted, ...readBack].flatMap(fingerprintsIn));
      const stored = await inBatches(tokens, storedToken);
      const storedFingerprints = stored.filter((item) => JSON.stringify(item).includes('fingerprint') || JSON.stringify(item).includes(victim.fingerprint));

      // The issue's figure: fingerprints obtainable per minute without storing a paymethod (goal 0).
      console.info(`fingerprint oracle, ${kind}: ${minted.length} mints in ${(minutes * 60).toFixed(1)} s, ${learned.size} fingerprints learned = ${(learned.size / minutes).toFixed(0)} per minute`);
      expect([...learned]).toEqual([]);
      expect(stored.every((item) => item !== undefined)).toBe(true);
      expect(storedFingerprints).toEqual([]);
      // Nothing was stored as a paymethod: the victim's fingerprint still names one record.
      const holders = await call(`${locationPath(ORG, loc)}/paymethods?filter=${encodeURIComponent(`fingerprint eq '${victim.fingerprint}'`)}`);
      expect(holders.body.number_results).toBe(1);
    });
  }

  it("gives a paymethod created from a token the fingerprint of a direct create, and fail_on_duplicate with a token is 409 naming a token, not a fingerprint", async () => {
    const customer = customerPath(ORG, loc, unique('cst_'));
    const direct = await post(customer, { card: { ...CARD, account_number: victim.number } });
    expect(direct.status, direct.text).toBe(201);
    const existing = String(direct.body.paymethod_token);

    const { body: token } = await post(`${locationPath(ORG, loc)}/onetimetokens`, { card: { ...CARD, account_number: victim.number } });
    const refused = await post(customer, { card: { one_time_token: token.one_time_token, name_on_card: 'Ann Lee' }, fail_on_duplicate: true });
    expectError(refused, 409, ['card.account_number']);
    expect(refused.body.response).toMatchObject({ response_code: 'DUPLICATE_PAYMETHOD' });
    expect((refused.body.response as { response_desc: string }).response_desc).toContain(existing);
    expect(fingerprintsIn(refused)).toEqual([]);

    // Not consumed by the refusal: the same token makes another customer's paymethod, with the same fingerprint.
    const fromToken = await post(customerPath(ORG, loc, unique('cst_')), { card: { one_time_token: token.one_time_token, name_on_card: 'Ann Lee' }, fail_on_duplicate: true });
    expect(fromToken.status, fromToken.text).toBe(201);
    expect((fromToken.body.card as { fingerprint: string }).fingerprint).toBe(victim.fingerprint);
    expect((direct.body.card as { fingerprint: string }).fingerprint).toBe(victim.fingerprint);
  });
});
