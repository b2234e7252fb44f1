import type { RecordViews } from '#shared/domain/events/domain-events.ts';
import { documentView } from './documents.ts';
import { paymethodReadView } from './paymethods.ts';

/** The views GET answers with: an event's detail is the record a GET would show at that moment. */
export const recordViews: RecordViews = {
  paymethod: paymethodReadView,
  document: documentView,
};
