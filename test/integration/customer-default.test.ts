import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { PaymethodStore } from '../support/paymethod-store.ts';
import { keys } from '#shared/store/keys.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import { unique } from '../support/paymethods.ts';


/** What a hooked client does around each read of the customer index (gsi3). */
interface CustomerIndexHook {
  /** Runs after the read, before its result reaches the store: another writer commits in between. */
  after?: (read: number) => Promise<void>;
  /** Tokens the read leaves out, as an index that has not caught up with its table yet would. */
  hidden?: (read: number) => readonly string[];
}

/**
 * The store's own behaviour against DynamoDB Local, with the one thing a
 * local table cannot show by itself staged by a hook on the client: another
 * request committing at the worst moment, or the customer index lagging its
 * table.
 */
describe('a customer always has exactly one default while it has paymethods', () => {
  const org = unique('org_default');
  const location = unique('loc_');
  let tableName: string;
  let Store: (client: DynamoDBDocumentClient, tableName: string) => PaymethodStore;
  let store: PaymethodStore;

  beforeAll(async () => {
    tableName = useRuntimeEnvironment().TABLE_NAME as string;
    Store = (await import('../support/paymethod-store.ts')).paymethodStore;
    store = Store(documentClient(), tableName);
  });

  function documentClient(hook?: CustomerIndexHook): DynamoDBDocumentClient {
    const base = new DynamoDBClient({});
    let reads = 0;
    base.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { IndexName?: string };
        if (context.commandName !== 'QueryCommand' || input.IndexName !== 'gsi3' || !hook) return next(args);
        reads += 1;
        const read = reads;
        const result = await next(args);
        await hook.after?.(read);
        const hidden = hook.hidden?.(read) ?? [];
        // The document client's own middleware has unmarshalled the items by now.
        const output = result.output as { Items?: Array<Record<string, unknown>>; Count?: number };
        if (hidden.length > 0 && output.Items) {
          output.Items = output.Items.filter((item) => !hidden.includes(item.paymethod_token as string));
          output.Count = output.Items.length;
        }
        return result;
      },
      { step: 'initialize', name: 'stageCustomerIndexRead' },
    );
    return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true } });
  }

  let clock = Date.UTC(2026, 0, 1);
  async function create(customer: string): Promise<Paymethod> {
    clock += 1000;
    const at = new Date(clock).toISOString();
    const record = {
      paymethod_token: unique('mth_'),
      organization_id: org,
      location_id: location,
      customer_token: customer,
      paymethod_type: 'card' as const,
      card: { card_type: 'visa' as const, name_on_card: 'Default Test', last_4_account_number: '1111', masked_account_number: '****1111', expire_month: 12, expire_year: 2031 },
      created_at: at,
      updated_at: at,
    };
    return store.create(record, undefined, { now: new Date(clock) });
  }

  async function pointerOf(customer: string): Promise<Record<string, unknown> | undefined> {
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    return (await dynamo.send(new GetCommand({ TableName: tableName, Key: keys.customerDefault(org, customer), ConsistentRead: true }))).Item;
  }

  /** The customer's default pointer and every paymethod's is_default, as the table holds them. */
  async function defaultsOf(customer: string, tokens: readonly string[]) {
    const pointer = await pointerOf(customer);
    const flags: Record<string, boolean | undefined> = {};
    for (const token of tokens) flags[token] = (await store.get(token))?.is_default;
    return { pointer: pointer && { paymethod_token: pointer.paymethod_token, paymethod_count: pointer.paymethod_count }, flags };
  }

  it('a create that commits while the default is deleted becomes the new default', async () => {
    const customer = unique('cst_');
    const leaving = await create(customer);
    let joining: Paymethod | undefined;
    // The delete reads the customer index, finds no other paymethod, and the create commits before the delete does.
    const racing = Store(documentClient({ after: async (read) => void (read === 1 && (joining = await create(customer))) }), tableName);

    await racing.delete(leaving);

    expect(joining?.is_default).toBe(false);
    expect(await defaultsOf(customer, [leaving.paymethod_token, joining!.paymethod_token])).toEqual({
      pointer: { paymethod_token: joining!.paymethod_token, paymethod_count: 1 },
      flags: { [leaving.paymethod_token]: undefined, [joining!.paymethod_token]: true },
    });
  });

  it('a create that commits while the default moves to another customer becomes the new default', async () => {
    const customer = unique('cst_');
    const other = unique('cst_');
    const moving = await create(customer);
    let joining: Paymethod | undefined;
    const racing = Store(documentClient({ after: async (read) => void (read === 1 && (joining = await create(customer))) }), tableName);

    const moved = await racing.update(moving, { ...moving, customer_token: other });

    expect(moved.is_default).toBe(true);
    expect(await defaultsOf(customer, [joining!.paymethod_token])).toEqual({
      pointer: { paymethod_token: joining!.paymethod_token, paymethod_count: 1 },
      flags: { [joining!.paymethod_token]: true },
    });
    expect((await defaultsOf(other, [])).pointer).toEqual({ paymethod_token: moving.paymethod_token, paymethod_count: 1 });
  });

  it('waits for a paymethod the customer index does not show yet', async () => {
    const customer = unique('cst_');
    const leaving = await create(customer);
    const recent = await create(customer);
    const reads: number[] = [];
    const lagging = Store(
      documentClient({
        hidden: (read) => {
          reads.push(read);
          return read <= 3 ? [recent.paymethod_token] : [];
        },
      }),
      tableName,
    );

    await lagging.delete(leaving);

    expect(reads.length).toBe(4);
    expect(await defaultsOf(customer, [recent.paymethod_token])).toEqual({
      pointer: { paymethod_token: recent.paymethod_token, paymethod_count: 1 },
      flags: { [recent.paymethod_token]: true },
    });
  });

  it('believes the index over a count it cannot confirm: the last paymethod can always be deleted', async () => {
    const customer = unique('cst_');
    const only = await create(customer);
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    await dynamo.send(new UpdateCommand({ TableName: tableName, Key: keys.customerDefault(org, customer), UpdateExpression: 'SET paymethod_count = :two', ExpressionAttributeValues: { ':two': 2 } }));

    await store.delete(only);

    expect(await pointerOf(customer)).toBeUndefined();
  });

  it('keeps the count through creates, moves and deletes, and promotes the newest other paymethod', async () => {
    const customer = unique('cst_');
    const other = unique('cst_');
    const [first, second, third] = [await create(customer), await create(customer), await create(customer)];
    expect([first.is_default, second.is_default, third.is_default]).toEqual([true, false, false]);
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: first.paymethod_token, paymethod_count: 3 });

    await store.update(second, { ...second, customer_token: other });
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: first.paymethod_token, paymethod_count: 2 });
    expect((await defaultsOf(other, [second.paymethod_token])).pointer).toEqual({ paymethod_token: second.paymethod_token, paymethod_count: 1 });

    await store.delete(first);
    expect(await defaultsOf(customer, [third.paymethod_token])).toEqual({ pointer: { paymethod_token: third.paymethod_token, paymethod_count: 1 }, flags: { [third.paymethod_token]: true } });

    const fourth = await create(customer);
    await store.delete(fourth);
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: third.paymethod_token, paymethod_count: 1 });
    await store.delete((await store.get(third.paymethod_token))!);
    expect(await pointerOf(customer)).toBeUndefined();
  });

  it('keeps one default and an exact count under concurrent creates and deletes', async () => {
    const customer = unique('cst_');
    const existing = [await create(customer), await create(customer), await create(customer)];
    // The default and another leave while eight paymethods join, all at once.
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 8 }, () => create(customer)),
      store.delete(existing[0]!),
      store.delete(existing[1]!),
    ]);
    // A write that lost its race three times is a 409 the client retries; none may leave the customer incoherent.
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect((outcome.reason as { code?: string }).code).toBe('CONCURRENT_MODIFICATION');
    console.log(`customer default under concurrency: ${outcomes.filter((outcome) => outcome.status === 'fulfilled').length} of ${outcomes.length} writes committed`);

    const remaining = (await store.list({ organizationId: org, customerToken: customer }, { pageSize: 50, pageIndex: 0 })).items;
    const defaults = remaining.filter((paymethod) => paymethod.is_default);
    expect(defaults).toHaveLength(1);
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: defaults[0]!.paymethod_token, paymethod_count: remaining.length });
  });

  it('counts a pointer written before counts were kept from the customer index, once', async () => {
    const customer = unique('cst_');
    const first = await create(customer);
    await create(customer);
    const { dynamo } = await import('#shared/aws/dynamodb.ts');
    await dynamo.send(new UpdateCommand({ TableName: tableName, Key: keys.customerDefault(org, customer), UpdateExpression: 'REMOVE paymethod_count' }));

    const third = await create(customer);
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: first.paymethod_token, paymethod_count: 3 });

    await store.delete(first);
    await store.delete((await store.get(third.paymethod_token))!);
    const remaining = (await store.list({ organizationId: org, customerToken: customer }, { pageSize: 10, pageIndex: 0 })).items;
    expect(remaining.map((paymethod) => [paymethod.is_default])).toEqual([[true]]);
    expect((await defaultsOf(customer, [])).pointer).toEqual({ paymethod_token: remaining[0]!.paymethod_token, paymethod_count: 1 });
  });
});
