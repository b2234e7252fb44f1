import { eventBridge } from '#shared/aws/eventbridge.ts';
import { EventBridgeBus } from '#shared/aws/event-bus.ts';
import { config } from '#shared/runtime/config.ts';
import type { EventBus } from '#shared/domain/events/publish.ts';
import { once } from './once.ts';

/** Reads a stream record into the domain's change (the table's item layout stays in shared/store). */
export { storedChangeOf } from '#shared/store/changes.ts';

export const eventBus = /* @__PURE__ */ once((): EventBus => new EventBridgeBus(eventBridge, config.eventBusName));

/** The bus; the views an event's detail is shaped with come from shared/http/events.ts. */
export const publishDeps = () => ({ bus: eventBus() });
