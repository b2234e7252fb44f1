import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyAccountUpdates } from '#shared/domain/account-updater/apply.ts';
import { exportAccountUpdates, previousMonth } from '#shared/domain/account-updater/export.ts';
import type { AccountUpdateRecord, AccountUpdaterStore, CardChange, StoredPaymethod } from '#shared/domain/account-updater/ports.ts';
import { InvalidRequest } from '#shared/domain/errors.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret, Vault, VaultBinding } from '#shared/domain/vault.ts';

/** A vault that "seals" by binding the plaintext to its ids, so a wrong binding cannot open it. */
class FakeVault implements Vault {
  opened = 0;
  async seal(plaintext: string, binding: VaultBinding): Promise<SealedSecret> {
    return { v: 1, key_id: 'fake', encrypted_data_key: new Uint8Array(), iv: new Uint8Array(), ciphertext: Buffer.from(`${binding.organizationId}|${binding.recordToken}|${plaintext}`), tag: new Uint8Array() };
  }
  async open(sealed: SealedSecret, binding: VaultBinding): Promise<string> {
    this.opened += 1;
    const [org, token, plaintext] = Buffer.from(sealed.ciphertext).toString().split('|');
    if (org !== binding.organizationId || token !== binding.recordToken) throw new Error('binding mismatch');
    return plaintext!;
  }
}

class FakeStore implements AccountUpdaterStore {
  readonly records = new Map<string, StoredPaymethod>();
  readonly history: AccountUpdateRecord[] = [];
  readonly months = new Set<string>();
  conflictsLeft = 0;
  async getPaymethods(tokens: readonly string[]) {
    return new Map(tokens.filter((token) => this.records.has(token)).map((token) => [token, structuredClone(this.records.get(token)!)]));
  }
  async markMonth(month: string, organizationId: string) {
    this.months.add(`${month}#${organizationId}`);
  }
  async applyCardUpdate(change: CardChange) {
    const stored = this.records.get(change.current.paymethod_token)!;
    if (this.conflictsLeft > 0) {
      this.conflictsLeft -= 1;
      stored.paymethod.version += 1;
    }
    if (stored.paymethod.version !== change.current.version) return 'conflict' as const;
    this.records.set(change.current.paymethod_token, { paymethod: { ...stored.paymethod, card: change.card, version: stored.paymethod.version + 1 }, secret: change.secret ?? stored.secret });
    this.history.push(change.history);
    return 'applied' as const;
  }
}

const HEADER = 'paymethod_token,au_code,account_number,expire_month,expire_year';
const vault = new FakeVault();
/** Fingerprints as the adapter shapes them, without KMS: the number's digest under the organization. */
const fingerprinter = { fingerprint: async (organizationId: string, account: { accountNumber: string }) => `fp_${createHash('sha256').update(`${organizationId}|${account.accountNumber}`).digest('base64url')}` };

async function card(store: FakeStore, token: string, organizationId = 'org_1', extra: Partial<Paymethod['card']> = {}, type: Paymethod['paymethod_type'] = 'card') {
  const paymethod: Paymethod = {
    paymethod_token: token,
    organization_id: organizationId,
    location_id: 'loc_1',
    paymethod_type: type,
    card: { card_type: 'visa', name_on_card: 'Ann', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2030, ...extra },
    is_default: false,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    version: 1,
  };
  store.records.set(token, { paymethod, secret: await vault.seal('4111111111111111', { organizationId, recordToken: token }) });
}

function file(...lines: string[]) {
  const text = lines.join('\r\n');
  return () =>
    (async function* () {
      // Small chunks: rows arrive split across reads.
      for (let at = 0; at < text.length; at += 7) yield Buffer.from(text.slice(at, at + 7));
    })();
}

let tick = 0;
const clock = () => new Date(Date.UTC(2026, 4, 15, 12, 0, tick++));

describe('applying an update file', () => {
  it('applies good rows, reports bad ones, and counts each row once', async () => {
    const store = new FakeStore();
    for (const token of ['mth_a', 'mth_b', 'mth_c', 'mth_d', 'mth_sup']) await card(store, token);
    await card(store, 'mth_other', 'org_2');
    await card(store, 'mth_echeck', 'org_1', {}, 'echeck');
    store.records.get('mth_sup')!.paymethod.card!.suppress_account_updater = true;
    const summary = await applyAccountUpdates(
      file(
        HEADER,
        'mth_a,new,5555555555554444,,', // 2 applied
        'mth_b,exp,,3,2031', // 3 applied
        'mth_c,cls,,,', // 4 superseded by 6
        'mth_zzz,new,,,', // 5 unknown
        'mth_c,con,,,', // 6 applied
        'mth_sup,new,5555555555554444,,', // 7 suppressed
        'mth_other,new,5555555555554444,,', // 8 other organization (scoped)
        'mth_d,new,1234,,', // 9 bad number
        'mth_d,xxx,,,', // 10 bad code
        'mth_d,exp,,1,2026', // 11 past expiry
        'mth_d,exp,,', // 12 wrong column count
        'mth_echeck,new,5555555555554444,,', // 13 not a card
        '',
      ),
      { organizationId: 'org_1' },
      { store, vault, fingerprinter, clock },
    );
    expect(summary.applied).toBe(3);
    expect(summary.skipped).toBe(2);
    expect(summary.errors.map((error) => [error.line, error.paymethod_token, error.reason.split(':')[0]])).toEqual([
      [5, 'mth_zzz', 'unknown token in org_1'],
      [8, 'mth_other', 'unknown token in org_1'],
      [9, 'mth_d', 'bad number'],
      [10, 'mth_d', 'bad code'],
      [11, 'mth_d', 'past expiry'],
      [12, 'mth_d', 'wrong column count'],
      [13, 'mth_echeck', 'not a card'],
    ]);
    expect(summary.notes).toEqual([
      { line: 4, paymethod_token: 'mth_c', reason: 'superseded by line 6' },
      { line: 7, paymethod_token: 'mth_sup', reason: 'suppressed: suppress_account_updater is true' },
    ]);
    const a = store.records.get('mth_a')!;
    expect(a.paymethod.card).toMatchObject({ last_4_account_number: '4444', masked_account_number: '****4444', au_code: 'new', au_description: 'New account number' });
    expect(await vault.open(a.secret!, { organizationId: 'org_1', recordToken: 'mth_a' })).toBe('5555555555554444');
    expect(store.records.get('mth_b')!.paymethod.card).toMatchObject({ expire_month: 3, expire_year: 2031, au_code: 'exp', au_description: 'New expiration date' });
    expect(store.records.get('mth_c')!.paymethod.card).toMatchObject({ au_code: 'con', au_description: 'Contact cardholder' });
    expect(store.records.get('mth_other')!.paymethod.card!.au_code).toBeUndefined();
    expect(store.history).toHaveLength(3);
    expect([...store.months]).toEqual(['2026-05#org_1']);
  });

  it('changes nothing when the same file is applied again, opening the stored number only when the last four match', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    await card(store, 'mth_b');
    const updates = file(HEADER, 'mth_a,new,5555555555554444,1,2032', 'mth_b,new,4111111111111111,,');
    const first = await applyAccountUpdates(updates, {}, { store, vault, fingerprinter, clock });
    // mth_b: same number as stored (opened and compared), new code: applied once.
    expect(first).toMatchObject({ applied: 2, skipped: 0, errors: [] });
    const date = store.records.get('mth_a')!.paymethod.card!.au_updated_date;
    const second = await applyAccountUpdates(updates, {}, { store, vault, fingerprinter, clock });
    expect(second).toEqual({ applied: 0, skipped: 2, errors: [], notes: [] });
    expect(store.records.get('mth_a')!.paymethod.card!.au_updated_date).toBe(date);
    expect(store.history).toHaveLength(2);
  });

  it('reads the card again after a lost race and decides again', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    store.conflictsLeft = 1;
    expect(await applyAccountUpdates(file(HEADER, 'mth_a,exp,,4,2033'), {}, { store, vault, fingerprinter, clock })).toMatchObject({ applied: 1, errors: [] });
    store.conflictsLeft = 5;
    const lost = await applyAccountUpdates(file(HEADER, 'mth_a,exp,,5,2033'), {}, { store, vault, fingerprinter, clock });
    expect(lost.errors).toEqual([{ line: 2, paymethod_token: 'mth_a', reason: 'the card changed while the file was being applied; apply the file again' }]);
  });

  it('refuses an empty file, a wrong header and non-UTF-8 as a whole, before writing anything', async () => {
    const store = new FakeStore();
    await card(store, 'mth_a');
    const refusal = (source: () => AsyncIterable<Uint8Array | string>) => applyAccountUpdates(source, {}, { store, vault, fingerprinter, clock }).catch((error: unknown) => error);
    for (const [source, code] of [
      [file(''), 'EMPTY_FILE'],
      [file('\uFEFF', ''), 'EMPTY_FILE'],
      [file('paymethod_token,au_code,account_number,expire_month', 'mth_a,new,,'), 'BAD_HEADER'],
      [file('token,code,number,month,year', 'mth_a,exp,,4,2033'), 'BAD_HEADER'],
      [() => (async function* () { yield Buffer.from(`${HEADER}\nmth_a,exp,,4,2033\n\xff`, 'latin1'); })(), 'BAD_ENCODING'],
    ] as const) {
      const error = await refusal(source);
      expect(error).toBeInstanceOf(InvalidRequest);
      expect((error as InvalidRequest).code).toBe(code);
    }
    expect(store.history).toHaveLength(0);
    expect(await applyAccountUpdates(file(HEADER, ''), {}, { store, vault, fingerprinter, clock })).toEqual({ applied: 0, skipped: 0, errors: [], notes: [] });
  });
});

describe('monthly export', () => {
  it('writes one file per organization with a header and one row per update, oldest first', async () => {
    const written = new Map<string, string>();
    const update = (org: string, token: string, date: string): AccountUpdateRecord => ({
      organization_id: org, location_id: 'loc_1', paymethod_token: token, au_code: 'new', au_description: 'New account number', au_updated_date: date, last_4_account_number: '4444', expire_month: 1, expire_year: 2032,
    });
    const history = {
      async *organizationsWithUpdates() {
        yield* ['org_1', 'org_2', 'org_marked_only'];
      },
      async *updatesOf(org: string) {
        if (org === 'org_1') yield* [update(org, 'mth_a', '2026-05-01T00:00:00.000Z'), { ...update(org, 'mth_b', '2026-05-02T00:00:00.000Z'), customer_token: 'cst_1', au_code: 'con' as const, au_description: 'Contact cardholder' }];
        if (org === 'org_2') yield update(org, 'mth_c', '2026-05-03T00:00:00.000Z');
      },
    };
    const reports = {
      async write(key: string, body: AsyncIterable<string>) {
        let text = '';
        for await (const chunk of body) text += chunk;
        written.set(key, text);
      },
    };
    expect(await exportAccountUpdates('2026-05', { history, reports })).toEqual({ month: '2026-05', keys: ['au-reports/org_1/2026-05.csv', 'au-reports/org_2/2026-05.csv'] });
    expect(written.get('au-reports/org_1/2026-05.csv')).toBe(
      'au_updated_date,paymethod_token,location_id,customer_token,au_code,au_description,last_4_account_number,expire_month,expire_year\r\n' +
        '2026-05-01T00:00:00.000Z,mth_a,loc_1,,new,New account number,4444,1,2032\r\n' +
        '2026-05-02T00:00:00.000Z,mth_b,loc_1,cst_1,con,Contact cardholder,4444,1,2032\r\n',
    );
    await expect(exportAccountUpdates('2026-5', { history, reports })).rejects.toBeInstanceOf(InvalidRequest);
  });

  it('exports the month before the run, across a year end', () => {
    expect(previousMonth(new Date('2026-01-01T06:00:00Z'))).toBe('2025-12');
    expect(previousMonth(new Date('2026-03-31T23:59:59Z'))).toBe('2026-02');
  });
});
