import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoEndpointSlots, webhookKeys } from '#shared/store/webhooks.ts';

const ENDPOINT = 'whe_slots';
const FAR = Date.now() + 60_000;

/**
 * The slot items in memory, with DynamoDB's conditional-write semantics for
 * the two calls slots make (UpdateItem, BatchGetItem); every take tried is
 * recorded, so a test sees which slots a sender tried and in what order.
 */
function slotTable() {
  const heldUntil = new Map<string, number>();
  const tried: number[] = [];
  const slotOf = (pk: string) => Number(pk.slice(pk.lastIndexOf('#') + 1));
  const client = {
    async send(command: unknown) {
      if (command instanceof UpdateCommand) {
        const { Key, ConditionExpression, ExpressionAttributeValues } = command.input;
        const pk = Key!.pk as string;
        if (ConditionExpression) {
          tried.push(slotOf(pk));
          if ((heldUntil.get(pk) ?? 0) >= (ExpressionAttributeValues![':now'] as number)) throw new ConditionalCheckFailedException({ message: 'held', $metadata: {} });
          heldUntil.set(pk, ExpressionAttributeValues![':until'] as number);
          return {};
        }
        heldUntil.set(pk, 0);
        return { Attributes: { pk, held_until: 0 } };
      }
      if (command instanceof BatchGetCommand) {
        const [[table, { Keys }]] = Object.entries(command.input.RequestItems!) as [[string, { Keys: Array<{ pk: string }> }]];
        return { Responses: { [table]: Keys.map(({ pk }) => ({ pk, held_until: heldUntil.get(pk) ?? 0 })) } };
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
  };
  /** Held by someone else (another container): only a write shows it. */
  const holdElsewhere = (slot: number) => heldUntil.set(webhookKeys.slot(ENDPOINT, slot).pk, FAR);
  return { client: client as unknown as DynamoDBDocumentClient, tried, holdElsewhere };
}

describe('endpoint slots: what a container knows of them', () => {
  it('tries first the slot it freed last, and never one it holds or is taking', async () => {
    const table = slotTable();
    const slots = new DynamoEndpointSlots(table.client, 'webhooks');
    const first = (await slots.acquire(ENDPOINT, FAR))!;
    const second = (await slots.acquire(ENDPOINT, FAR))!;
    expect(second).not.toBe(first);
    await slots.release(ENDPOINT, first);
    table.tried.length = 0;
    expect(await slots.acquire(ENDPOINT, FAR)).toBe(first);
    expect(table.tried).toEqual([first]);

    // Eight taken at once in one container: eight different slots, one write each.
    const crowd = new DynamoEndpointSlots(slotTable().client, 'webhooks');
    const taken = await Promise.all(Array.from({ length: 8 }, () => crowd.acquire(ENDPOINT, FAR)));
    expect(new Set(taken).size).toBe(8);
    // All eight held here: a ninth asks DynamoDB nothing.
    expect(await crowd.acquire(ENDPOINT, FAR)).toBeUndefined();
  });

  it('forgets a slot it could not free: tried again once its lease has run out, not skipped for good', async () => {
    const table = slotTable();
    const slots = new DynamoEndpointSlots(table.client, 'webhooks');
    const held = await Promise.all(Array.from({ length: 8 }, () => slots.acquire(ENDPOINT, Date.now() + 50)));
    const send = table.client.send.bind(table.client);
    table.client.send = (async (command: unknown) => {
      if (command instanceof UpdateCommand && !command.input.ConditionExpression) throw new Error('throttled');
      return send(command as never);
    }) as typeof table.client.send;
    await expect(slots.release(ENDPOINT, held[0]!)).rejects.toThrow('throttled');
    table.client.send = send;
    // Its lease (50 ms) runs out: the slot is taken again, where a container that kept it as held would try nothing.
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await slots.acquire(ENDPOINT, FAR)).toBe(held[0]);
  });

  it('finds a free slot by reading them when its first try is held elsewhere', async () => {
    const table = slotTable();
    for (let slot = 0; slot < 7; slot += 1) table.holdElsewhere(slot);
    const slots = new DynamoEndpointSlots(table.client, 'webhooks');
    expect(await slots.acquire(ENDPOINT, FAR)).toBe(7);
    table.holdElsewhere(7);
    expect(await slots.acquire(ENDPOINT, FAR)).toBeUndefined();
  });

  it('wakes one waiting sender per slot freed here, longest waiting first, and the others when their time is up', async () => {
    const slots = new DynamoEndpointSlots(slotTable().client, 'webhooks');
    const held = await Promise.all(Array.from({ length: 8 }, () => slots.acquire(ENDPOINT, FAR)));
    const woken: string[] = [];
    const waits = ['first', 'second', 'third'].map((name) => slots.nextRelease(ENDPOINT, name === 'third' ? 50 : 60_000).then(() => woken.push(name)));
    await slots.release(ENDPOINT, held[0]!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toEqual(['first']);
    await slots.release(ENDPOINT, held[1]!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toEqual(['first', 'second']);
    await Promise.all(waits);
    expect(woken).toEqual(['first', 'second', 'third']);
  });
});
