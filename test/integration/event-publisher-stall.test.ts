/**
 * The event publisher's bus with EventBridge stalled, through real sockets:
 * a loopback fault proxy (support/fault-proxy.ts) between the EventBridge
 * client and the local stand-in holds PutEvents open and silent. The
 * publisher runs on the table's stream under no request deadline, so its
 * client's own budget is all that ends the wait: the call fails after its
 * attempts (the stream then delivers the batch again) instead of holding the
 * shard until the function times out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTBRIDGE_BUDGET } from '#shared/aws/client-config.ts';
import type { DomainEvent } from '#shared/domain/events/domain-events.ts';
import { EVENT_SOURCES } from '#shared/platform/names.ts';
import { useRuntimeEnvironment } from '../support/api.ts';
import type { FaultProxy } from '../support/fault-proxy.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';

const ENDPOINT = 'AWS_ENDPOINT_URL_EVENTBRIDGE';

describe('publishing events with EventBridge stalled', () => {
  let proxy: FaultProxy;
  let saved: string | undefined;

  beforeAll(async () => {
    useRuntimeEnvironment();
    saved = process.env[ENDPOINT];
    proxy = await startFaultProxy(saved as string);
    // Before the client module loads: it reads its endpoint once, like a container.
    process.env[ENDPOINT] = proxy.url;
  });

  afterAll(async () => {
    await proxy?.close();
    process.env[ENDPOINT] = saved;
  });

  it('gives up after its attempts, and publishes once the bus answers again', async () => {
    const { eventBridge } = await import('#shared/aws/eventbridge.ts');
    const { EventBridgeBus } = await import('#shared/aws/event-bus.ts');
    const bus = new EventBridgeBus(eventBridge, process.env.EVENT_BUS_NAME as string);
    const event: DomainEvent = {
      source: EVENT_SOURCES.paymethods,
      detailType: 'Paymethod Updated',
      detail: { event_id: `evt_stall_${Date.now()}`, organization_id: 'org_stall', occurred_at: new Date().toISOString() },
    };

    proxy.set({ fault: 'stall-before', match: ({ target }) => target === 'AWSEvents.PutEvents' });
    await expect(bus.publish([event])).rejects.toThrow();
    expect(proxy.struck).toBe(EVENTBRIDGE_BUDGET.maxAttempts);

    proxy.set(undefined);
    expect(await bus.publish([event])).toEqual({ failed: [] });
  });
});
