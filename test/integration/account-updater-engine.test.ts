import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { npmScript } from '../support/cli.ts';
import { unique } from '../support/paymethods.ts';
import { withLuhnDigit } from '../support/card-numbers.ts';

/**
 * The engine (the state machine's definition and handlers, run locally) on
 * files of several batches, against the running runtime's stores. Cards are
 * written straight into the table in the repository's layout (numbers
 * sealed by the real vault); the engine runs in this process so a fault can
 * be injected into its DynamoDB client.
 */
const HEADER = 'paymethod_token,au_code,account_number,expire_month,expire_year';
const FUNCTIONS_DIR = fileURLToPath(new URL('../../functions', import.meta.url));
const CARDS = 2_300; // three batches of the definition's 1,000 rows (the header is row 1)
let dir: string;
let environment: Record<string, string>;

beforeAll(async () => {
  environment = useRuntimeEnvironment();
  dir = await mkdtemp(path.join(tmpdir(), 'au-engine-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function seedCards(prefix: string, count: number, organizationId: string): Promise<string[]> {
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { paymethodItem } = await import('#shared/store/paymethod-item.ts');
  const { batchDeps } = await import('#shared/wiring/account-updater.ts');
  const { vault } = batchDeps();
  // The letter between the random prefix and the index keeps every digit run short: a token cell with a run of 12
  // digits reads as a card number behind a prefix, and the file refuses it as an unknown token.
  const tokens = Array.from({ length: count }, (_unused, index) => `mth_${prefix}x${String(index).padStart(5, '0')}`);
  for (let first = 0; first < count; first += 25) {
    const requests = [];
    for (const token of tokens.slice(first, first + 25)) {
      const record: Paymethod = {
        paymethod_token: token,
        organization_id: organizationId,
        location_id: 'loc_engine',
        paymethod_type: 'card',
        card: { card_type: 'visa', name_on_card: 'Engine Card', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
        is_default: false,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 1,
      };
      requests.push({ PutRequest: { Item: paymethodItem(record, await vault.seal('4111111111111111', { organizationId, recordToken: token })) } });
    }
    let pending = requests;
    while (pending.length > 0) {
      const result = await dynamo.send(new BatchWriteCommand({ RequestItems: { [environment.TABLE_NAME!]: pending } }));
      pending = (result.UnprocessedItems?.[environment.TABLE_NAME!] ?? []) as typeof pending;
    }
  }
  return tokens;
}


async function cardsOf(tokens: readonly string[]) {
  const { DynamoCardUpdates } = await import('#shared/store/card-updates.ts');
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const store = new DynamoCardUpdates(dynamo, environment.TABLE_NAME!);
  const all = new Map<string, Paymethod>();
  for (let first = 0; first < tokens.length; first += 100) for (const [token, found] of await store.findCards(tokens.slice(first, first + 100))) all.set(token, found.paymethod);
  return all;
}

describe('Account Updater engine: batches that retry alone and agree whatever their order', () => {
  const organizationId = unique('org_engine');
  let tokens: string[];
  let file: string;
  const duplicated = () => tokens[7]!;
  // The card's own row (line 9) and the one inserted at line 1,502 lose to the last one.
  const superseded = () => [9, 1_502].map((line) => ({ line, paymethod_token: duplicated(), reason: `superseded by line ${CARDS + 3}` }));

  beforeAll(async () => {
    tokens = await seedCards(unique('eng').slice(0, 10), CARDS, organizationId);
    // Every card once, in token order; one card again in the second and third batches: the last line (in batch 3) wins.
    const rows = tokens.map((token, index) => (index % 2 === 0 ? `${token},exp,,6,2033` : `${token},con,,,`));
    rows.splice(1_500, 0, `${duplicated()},cls,,,`);
    rows.push(`${duplicated()},new,4012888888881881,,`);
    file = path.join(dir, 'multi.csv');
    await writeFile(file, `${HEADER}\r\n${rows.join('\r\n')}\r\n`);
  }, 300_000);

  it('applies a file of three batches with one batch failing once: it retries alone, the result equals a clean run', async () => {
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { applyLocalFile } = await import('../../local/au-engine.ts');
    // The second batch's 500th card fails once, after that batch already committed earlier rows.
    const victim = tokens[1_200]!;
    let faults = 0;
    let lookups = 0;
    const updatesPerToken = new Map<string, number>();
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        const command = args.input as { Key?: { pk?: string }; RequestItems?: unknown };
        if (command.RequestItems && !('ReturnConsumedCapacity' in command) && JSON.stringify(command.RequestItems).includes('"Keys"')) lookups += 1;
        const token = typeof command.Key?.pk === 'string' && command.Key.pk.startsWith('MTH#') ? command.Key.pk.slice(4) : undefined;
        if (token === victim && faults === 0 && 'UpdateExpression' in command) {
          faults += 1;
          throw Object.assign(new Error('injected: DynamoDB unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
        }
        const result = await next(args);
        if (token && 'UpdateExpression' in command) updatesPerToken.set(token, (updatesPerToken.get(token) ?? 0) + 1);
        return result;
      },
      { step: 'initialize', name: 'auEngineFault' },
    );
    let summary;
    try {
      ({ summary } = await applyLocalFile(file, { organizationId }, { bucket: environment.REPORTS_BUCKET!, functionsDir: FUNCTIONS_DIR, concurrency: 3, retryIntervalMs: 10 }));
    } finally {
      dynamo.middlewareStack.remove('auEngineFault');
    }
    expect(faults).toBe(1);
    expect(summary).toEqual({
      applied: CARDS,
      skipped: 2,
      errors: [],
      error_count: 0,
      notes: superseded(),
    });
    // Every card written once: no batch but the failed one ran again, and its committed rows were not rewritten.
    // The duplicated card's two rows sit in two batches: the later line's batch may commit after the earlier one's.
    expect([...updatesPerToken].filter(([token, count]) => count !== 1 && !(token === duplicated() && count === 2))).toEqual([]);
    expect(updatesPerToken.size).toBe(CARDS);
    // Cards are looked up in batches (BatchGetItem of up to 100 keys, plus any unprocessed keys again), never one per row.
    expect(lookups).toBeLessThan(CARDS / 20);

    const cards = await cardsOf(tokens);
    expect(cards.get(duplicated())!.card).toMatchObject({ au_code: 'new', last_4_account_number: '1881', expire_month: 12, expire_year: 2031 });
    expect(cards.get(tokens[0]!)!.card).toMatchObject({ au_code: 'exp', expire_month: 6, expire_year: 2033 });
    expect(cards.get(victim)!.card).toMatchObject({ au_code: 'exp', expire_month: 6, expire_year: 2033 });
    expect(cards.get(tokens[1]!)!.card).toMatchObject({ au_code: 'con', expire_month: 12 });
  }, 600_000);

  it('changes nothing when the same file is applied again', async () => {
    const before = await cardsOf(tokens);
    const again = await npmScript('au:apply', file, '--org', organizationId);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      applied: 0,
      skipped: CARDS + 2,
      errors: [],
      error_count: 0,
      notes: superseded(),
    });
    expect(await cardsOf(tokens)).toEqual(before);
  }, 600_000);
});

describe('Account Updater engine: a run whose map fails', () => {
  const RUN_FAILED = 'not applied: the run failed before its batch completed; apply the file again';
  const readJson = async (key: string) => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: key }));
    return JSON.parse(await Body!.transformToString('utf8')) as Record<string, unknown>;
  };
  const upload = async (name: string, rows: string[]) => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { RUNS_PREFIX } = await import('#shared/account-updater/state-machine.ts');
    const folder = `${RUNS_PREFIX}${unique(name)}/`;
    await s3.send(new PutObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: `${folder}${name}.csv`, Body: `${HEADER}\n${rows.join('\n')}\n` }));
    return { key: `${folder}${name}.csv`, result_key: `${folder}summary.json` };
  };

  it('merges and reports a run in which more than the tolerated share of batches failed: what applied, the rest not applied, the failure', async () => {
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    const { runAccountUpdaterLocally } = await import('../../local/au-engine.ts');
    const organizationId = unique('org_maptol');
    const tokens = await seedCards(unique('tol').slice(0, 10), 1_000, organizationId);
    // Batch 1: the header and 999 cards. Batch 2 (lines 1,001 to 2,000) fails on every attempt: its first token's lookup
    // is refused. One batch of two failed, past the tolerated 5%: the map fails, and batch 3 (line 2,001) never starts.
    const victim = `mth_${unique('vic').slice(0, 12)}`;
    const second = Array.from({ length: 1_000 }, (_unused, index) => (index === 0 ? `${victim},cls,,,` : `mth_nowhere${String(index).padStart(6, '0')},cls,,,`));
    const file = await upload('failing', [...tokens.slice(0, 999).map((token) => `${token},exp,,6,2033`), ...second, `${tokens[999]},cls,,,`]);
    let refused = 0;
    dynamo.middlewareStack.add(
      (next) => async (args) => {
        if (JSON.stringify((args.input as { RequestItems?: unknown }).RequestItems ?? {}).includes(`MTH#${victim}`)) {
          refused += 1;
          throw Object.assign(new Error('injected: DynamoDB unavailable'), { name: 'ServiceUnavailable', $fault: 'server' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'auMapFailure' },
    );
    let outcome;
    try {
      outcome = await runAccountUpdaterLocally({ bucket: environment.REPORTS_BUCKET!, ...file, organization_id: organizationId }, { functionsDir: FUNCTIONS_DIR, concurrency: 1, retryIntervalMs: 10 });
    } finally {
      dynamo.middlewareStack.remove('auMapFailure');
    }
    if (!('run' in outcome)) throw new Error(`refused: ${outcome.refused}`);
    expect(refused).toBe(4); // the batch's first attempt and its three retries
    const failure = { error: 'States.ExceedToleratedFailureThreshold', cause: '1 of the 2 batches started failed after their retries: more than the tolerated 5%' };
    expect(outcome).toMatchObject({ failedBatches: 1, failure });

    const summary = await readJson(file.result_key);
    const notApplied = Array.from({ length: 1_001 }, (_unused, index) => ({ line: 1_001 + index, paymethod_token: '', reason: RUN_FAILED }));
    expect(summary).toEqual({ failure, applied: 999, skipped: 0, errors: notApplied.slice(0, 1_000), error_count: 1_001, notes: [], errors_key: outcome.run.errors_key });
    const { s3 } = await import('#shared/aws/s3.ts');
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: outcome.run.errors_key }));
    expect((await Body!.transformToString('utf8')).trimEnd().split('\r\n')).toEqual(['line,paymethod_token,reason', ...notApplied.map((error) => `${error.line},,${error.reason}`)]);
    const cards = await cardsOf([tokens[0]!, tokens[998]!, tokens[999]!]);
    expect(cards.get(tokens[0]!)!.card).toMatchObject({ au_code: 'exp', expire_month: 6, expire_year: 2033 });
    expect(cards.get(tokens[998]!)!.card).toMatchObject({ au_code: 'exp', expire_month: 6, expire_year: 2033 });
    expect(cards.get(tokens[999]!)!.card!.au_code).toBeUndefined(); // its batch never started
  }, 300_000);

  it("merges and reports a run whose ranges could not be read, as the ItemReader failing in AWS", async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { runAccountUpdaterLocally } = await import('../../local/au-engine.ts');
    const file = await upload('unreadable', ['mth_unread000001,cls,,,', 'mth_unread000002,cls,,,']);
    // The check step writes the ranges; reading them for the map is refused, as a changed key or bucket policy would.
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string };
        if (context.commandName === 'GetObjectCommand' && input.Key?.endsWith('/ranges.json')) throw Object.assign(new Error('injected: Access Denied'), { name: 'AccessDenied', $fault: 'client' });
        return next(args);
      },
      { step: 'initialize', name: 'auUnreadable' },
    );
    let outcome;
    try {
      outcome = await runAccountUpdaterLocally({ bucket: environment.REPORTS_BUCKET!, ...file }, { functionsDir: FUNCTIONS_DIR });
    } finally {
      s3.middlewareStack.remove('auUnreadable');
    }
    if (!('run' in outcome)) throw new Error(`refused: ${outcome.refused}`);
    const failure = { error: 'States.ItemReaderFailed', cause: `reading the items of ${outcome.run.ranges_key}: AccessDenied: injected: Access Denied` };
    expect(outcome).toMatchObject({ failedBatches: 0, failure });
    expect(await readJson(file.result_key)).toEqual({
      failure,
      applied: 0,
      skipped: 0,
      errors: [2, 3].map((line) => ({ line, paymethod_token: '', reason: RUN_FAILED })),
      error_count: 2,
      notes: [],
    });
  }, 60_000);
});

describe('Account Updater engine: no card number in the state machine\'s data', () => {
  it('runs a file of 1,000 new numbers with none in any execution input, output or history, nor in any object the run writes under au-runs/', async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { paginateListObjectsV2 } = await import('@aws-sdk/client-s3');
    const { runAccountUpdaterLocally } = await import('../../local/au-engine.ts');
    const { RUNS_PREFIX } = await import('#shared/account-updater/state-machine.ts');
    const { passesLuhn } = await import('#shared/domain/paymethods/rules.ts');
    const bucket = environment.REPORTS_BUCKET!;
    const organizationId = unique('org_nonumber');
    const tokens = await seedCards(unique('non').slice(0, 10), 1_000, organizationId);
    // 1,000 distinct Visa numbers; two rows carry one as their token cell too, with dots and full-width digits.
    const numbers = tokens.map((_token, index) => withLuhnDigit(`4${String(index).padStart(6, '0')}${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`));
    const rows = tokens.map((token, index) => `${token},new,${numbers[index]},,`);
    rows.push(`${numbers[0]!.replace(/(\d{4})(?=\d)/g, '$1.')},new,${numbers[1]},,`, `"${[...numbers[2]!].map((digit) => String.fromCharCode(0xff10 + Number(digit))).join('')}",new,,,`);
    const folder = `${RUNS_PREFIX}${unique('nonumber')}/`;
    const key = `${folder}updates.csv`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${HEADER}\n${rows.join('\n')}\n` }));

    const history: unknown[] = [];
    const written: string[] = [];
    // Every object the run writes, whatever its key: the ranges, the batch results, the Map's result files, the summary.
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string };
        if (context.commandName === 'PutObjectCommand' && input.Key) written.push(input.Key);
        return next(args);
      },
      { step: 'initialize', name: 'auWritten' },
    );
    let outcome;
    try {
      outcome = await runAccountUpdaterLocally({ bucket, key, result_key: `${folder}summary.json`, organization_id: organizationId }, { functionsDir: FUNCTIONS_DIR, history: (event) => history.push(event) });
    } finally {
      s3.middlewareStack.remove('auWritten');
    }
    if (!('run' in outcome)) throw new Error(`refused: ${outcome.refused}`);
    expect(outcome.failedBatches).toBe(0);
    const summary = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${folder}summary.json` }))).Body!.transformToString();
    expect(JSON.parse(summary)).toMatchObject({ applied: 1_000, error_count: 2 });

    // The history holds each execution's input and output and every state's: the run's and each batch's.
    const children = new Set(history.map((event) => (event as { execution: string }).execution).filter((execution) => execution !== 'run'));
    expect(children.size).toBe(2); // 1,003 lines: two ranges
    for (const type of ['ExecutionStarted', 'TaskStateEntered', 'MapStateEntered', 'StateEntered', 'StateExited', 'ExecutionSucceeded']) expect(history.map((event) => (event as { type: string }).type)).toContain(type);
    const objects: Array<[string, string]> = [];
    for (const object of new Set([...written, ...(await listed(`${RUNS_PREFIX}${outcome.run.run_id}/`))])) {
      if (object === key) continue; // the update file itself
      objects.push([object, await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object }))).Body!.transformToString()]);
    }
    // The ranges, the two batch results, the Map's manifest and result file, the summary.
    expect(objects.length).toBeGreaterThanOrEqual(6);
    expect(objects.some(([object]) => object.endsWith('/ranges.json'))).toBe(true);
    expect(objects.some(([object]) => object.endsWith('/SUCCEEDED_0.json'))).toBe(true);

    const texts: Array<[string, string]> = [...history.map((event, index): [string, string] => [`history ${index}`, JSON.stringify(event)]), ...objects];
    // The search finds every number where one is: in the update file, each of the 1,000 (and the three spelled again).
    expect(new Set(cardNumbersIn(`${HEADER}\n${rows.join('\n')}\n`, numbers)).size).toBe(1_000);
    const found = texts.flatMap(([where, text]) => cardNumbersIn(text, numbers).map((number) => `${where}: ${number}`));
    // The figure the issue asks for: card numbers in any Step Functions input, output or result (goal 0).
    console.info(`card numbers found in ${texts.length} execution events and run objects: ${found.length}`);
    expect(found).toEqual([]);

    async function listed(prefix: string): Promise<string[]> {
      const keys: string[] = [];
      for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket: bucket, Prefix: prefix })) keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      return keys;
    }
    /** Each of `numbers` in any spelling (compatibility forms folded, separators dropped), and any standalone Luhn-valid run of 12 to 19 digits. */
    function cardNumbersIn(text: string, known: readonly string[]): string[] {
      const folded = text.normalize('NFKC');
      const joined = folded.replace(/[\s._/\\-]/g, '');
      const named = known.filter((number) => joined.includes(number));
      const runs = [...folded.matchAll(/(?<![0-9A-Za-z-])[0-9]{12,19}(?![0-9A-Za-z-])/g)].map((match) => match[0]).filter((run) => passesLuhn(run));
      return [...named, ...runs];
    }
  }, 300_000);
});

describe('Account Updater engine: long error lists and the inbox', () => {
  it('lists the first 1,000 errors, counts them all, and writes the whole list next to the file', async () => {
    const rows = Array.from({ length: 1_234 }, (_unused, index) => `mth_unknown${String(index).padStart(6, '0')},cls,,,`);
    const file = path.join(dir, 'errors.csv');
    await writeFile(file, `${HEADER}\n${rows.join('\n')}\n`);
    const result = await npmScript('au:apply', file);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { errors: Array<{ line: number }>; error_count: number; errors_file: string };
    expect(summary).toMatchObject({ applied: 0, skipped: 0, error_count: 1_234, errors_file: `${file}.errors.csv` });
    expect(summary.errors).toHaveLength(1_000);
    expect(summary.errors[999]).toEqual({ line: 1_001, paymethod_token: 'mth_unknown000999', reason: 'unknown token' });
    const lines = (await readFile(summary.errors_file, 'utf8')).trimEnd().split('\r\n');
    expect(lines[0]).toBe('line,paymethod_token,reason');
    expect(lines.slice(1)).toEqual(rows.map((row, index) => `${index + 2},${row.split(',')[0]},unknown token`));
  }, 600_000);

  it('cuts a file of long rows into batches of about a megabyte of the file, and counts every row once', async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { S3BatchResults } = await import('#shared/aws/reports.ts');
    const { runAccountUpdaterLocally } = await import('../../local/au-engine.ts');
    const { MAX_BATCH_BYTES, RUNS_PREFIX } = await import('#shared/account-updater/state-machine.ts');
    // 300 rows of about 7 kB each (a sixth cell, which makes every one an error): 2.1 MB, three batches' worth.
    const rows = Array.from({ length: 300 }, (_unused, index) => `mth_long${String(index).padStart(6, '0')},cls,,,,${'x'.repeat(7_000)}`);
    const folder = `${RUNS_PREFIX}${unique('long')}/`;
    await s3.send(new PutObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: `${folder}long.csv`, Body: `${HEADER}\n${rows.join('\n')}\n` }));
    const outcome = await runAccountUpdaterLocally({ bucket: environment.REPORTS_BUCKET!, key: `${folder}long.csv`, result_key: `${folder}summary.json` }, { functionsDir: FUNCTIONS_DIR });
    if (!('run' in outcome)) throw new Error(`refused: ${outcome.refused}`);
    expect(outcome.failedBatches).toBe(0);
    const batches: Array<{ first_line: number; last_line: number }> = [];
    for await (const result of new S3BatchResults(s3, environment.REPORTS_BUCKET!).list(outcome.run.run_id)) batches.push(result);
    // Each batch holds as many of these rows as fit, and one more (the row that takes it past the limit); the lines follow on.
    const fit = Math.floor(MAX_BATCH_BYTES / 7_000) + 1;
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(301 / fit));
    expect(batches.map((batch) => batch.last_line - batch.first_line + 1).every((size) => size <= fit)).toBe(true);
    expect(batches.map((batch) => [batch.first_line, batch.last_line])).toEqual(
      batches.map((batch, index) => [index === 0 ? 1 : batches[index - 1]!.last_line + 1, batch.last_line]),
    );
    expect(batches.at(-1)!.last_line).toBe(301);
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: `${folder}summary.json` }));
    const summary = JSON.parse(await Body!.transformToString('utf8')) as { applied: number; skipped: number; error_count: number; errors: Array<{ reason: string }> };
    expect(summary).toMatchObject({ applied: 0, skipped: 0, error_count: 300 });
    expect(new Set(summary.errors.map((error) => error.reason))).toEqual(new Set(['wrong column count: expected 5, got 6']));
  }, 120_000);

  it('applies a file created under au-inbox/ and writes its summary under au-results/', async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const organizationId = unique('org_inbox');
    const [token] = await seedCards(unique('inb').slice(0, 10), 1, organizationId);
    const name = `${unique('file')}.csv`;
    await s3.send(new PutObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: `au-inbox/${organizationId}/${name}`, Body: `${HEADER}\n${token},cls,,,\nmth_nope,cls,,,\n` }));
    const resultKey = `au-results/${organizationId}/${name}.json`;
    let summary: unknown;
    for (let attempt = 0; attempt < 120 && summary === undefined; attempt += 1) {
      summary = await s3
        .send(new GetObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: resultKey }))
        .then(async ({ Body }) => JSON.parse(await Body!.transformToString('utf8')) as unknown)
        .catch(() => new Promise((resolve) => setTimeout(() => resolve(undefined), 500)));
    }
    expect(summary).toEqual({ applied: 1, skipped: 0, errors: [{ line: 3, paymethod_token: 'mth_nope', reason: `unknown token in ${organizationId}` }], error_count: 1, notes: [] });
  }, 120_000);
});

describe('Account Updater check step', () => {
  it('lets one execution take an upload: a second delivery ends without writing, a retried check and a new upload go on', async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { handler } = await import('#functions/au-check.ts');
    const { lambdaContext } = await import('../support/lambda-event.ts');
    const organizationId = unique('org_delivery');
    const key = `au-inbox/${organizationId}/may.csv`;
    const resultKey = `au-results/${organizationId}/may.csv.json`;
    await s3.send(new PutObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: key, Body: `${HEADER}\nmth_nope,cls,,,\n` }));
    const check = (runId: string, sequencer: string) =>
      handler({ bucket: environment.REPORTS_BUCKET!, key, sequencer, run_id: runId, started_at: '2026-05-15T12:00:00.000Z' }, lambdaContext('au-check')) as Promise<{ run?: { run_id: string }; refused?: string }>;
    const resultExists = () =>
      s3.send(new GetObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: resultKey })).then(
        () => true,
        () => false,
      );

    // The runtime routes the upload to its own run of the engine, as the stack's rule starts an execution: let that
    // run write its summary and take it away, so that a summary seen below can only come from these checks.
    for (let attempt = 0; attempt < 120 && !(await resultExists()); attempt += 1) await sleep(250);
    await s3.send(new DeleteObjectCommand({ Bucket: environment.REPORTS_BUCKET!, Key: resultKey }));
    expect(await resultExists()).toBe(false);

    expect((await check('run-first', '00617F08299329D189')).run?.run_id).toBe('run-first');
    expect(await check('run-second', '00617F08299329D189')).toEqual({ refused: 'DUPLICATE_DELIVERY' });
    expect(await resultExists()).toBe(false); // the refusal of a duplicate writes no summary over the first run's
    expect((await check('run-first', '00617F08299329D189')).run?.run_id).toBe('run-first'); // its own step, retried
    expect((await check('run-third', '00617F0829932AAAAA')).run?.run_id).toBe('run-third'); // the file uploaded again
  }, 60_000);

  it('reads one version of the file throughout: the one the event names, else the one current when the check starts', async () => {
    const { s3 } = await import('#shared/aws/s3.ts');
    const { handler } = await import('#functions/au-check.ts');
    const { runAccountUpdaterLocally } = await import('../../local/au-engine.ts');
    const { lambdaContext } = await import('../support/lambda-event.ts');
    const bucket = environment.REPORTS_BUCKET!;
    const organizationId = unique('org_version');
    const [checked, replacement] = await seedCards(unique('ver').slice(0, 10), 2, organizationId);
    const folder = `au-runs/test-${unique('version')}/`;
    const key = `${folder}file.csv`;
    // The emulator keeps no versions: this client gives the key one, `v1`, kept under a key of its own, as S3 keeps an old version.
    const checkedFile = `${HEADER}\n${checked},exp,,6,2033\n`;
    for (const target of [key, `${key}@v1`]) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: target, Body: checkedFile }));
    const heads: string[] = [];
    let replaced = false;
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: string; VersionId?: string; Range?: string };
        if (input.Key !== key) return next(args);
        if (context.commandName === 'HeadObjectCommand') {
          heads.push(key);
          const result = await next(args);
          return { ...result, output: { ...result.output, VersionId: 'v1' } } as typeof result;
        }
        if (context.commandName !== 'GetObjectCommand') return next(args);
        // The batches start reading after the check step has read the file: the object is replaced just then.
        if (input.Range && !replaced) {
          replaced = true;
          await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `${HEADER}\n${replacement},exp,,7,2034\n` }));
        }
        if (input.VersionId === 'v1') return next({ ...args, input: { ...args.input, Key: `${key}@v1`, VersionId: undefined } as typeof args.input });
        return next(args);
      },
      { step: 'initialize', name: 'versionedObject' },
    );
    try {
      const named = (await handler({ bucket, key, version_id: 'v1', run_id: 'run-named', started_at: '2026-05-15T12:00:00.000Z', result_key: `${folder}named.json`, organization_id: organizationId }, lambdaContext('au-check'))) as { run: { version_id: string } };
      expect(named.run.version_id).toBe('v1');
      expect(heads).toEqual([]); // the event's version is taken as it is

      const outcome = await runAccountUpdaterLocally({ bucket, key, result_key: `${folder}summary.json`, organization_id: organizationId }, { functionsDir: FUNCTIONS_DIR, concurrency: 1 });
      expect(heads).toEqual([key]);
      expect(replaced).toBe(true);
      expect(outcome).toMatchObject({ run: { version_id: 'v1' }, failedBatches: 0 });
    } finally {
      s3.middlewareStack.remove('versionedObject');
    }
    const summary = JSON.parse(await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${folder}summary.json` }))).Body!.transformToString());
    expect(summary).toMatchObject({ applied: 1, skipped: 0, error_count: 0 });
    const cards = await cardsOf([checked!, replacement!]);
    expect(cards.get(checked!)!.card).toMatchObject({ au_code: 'exp', expire_month: 6, expire_year: 2033 });
    expect(cards.get(replacement!)!.card).toMatchObject({ expire_month: 12, expire_year: 2031 });
    expect(cards.get(replacement!)!.card!.au_code).toBeUndefined();
  }, 60_000);
});
