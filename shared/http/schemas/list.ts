/** The shape of the list envelope (shared/http/list-query.ts), for the OpenAPI document and the tests. */
import * as z from 'zod/mini';
import { MAX_PAGE_INDEX, MAX_PAGE_SIZE } from '../list-query.ts';
import { responseMemberSchema } from './envelope.ts';

/**
 * The body listResponse builds, with `item` as the shape of one result and
 * `echoed` the names `resource_specific` may hold (the route's filters, and
 * the path scope where the route echoes it).
 */
export function listEnvelopeSchema<Item extends z.ZodMiniType>(item: Item, echoed: readonly string[]) {
  return z.object({
    number_results: z.int().check(z.minimum(0), z.meta({ description: 'Number of results on this page.' })),
    search_criteria: z.object({
      page_size: z.int().check(z.minimum(1), z.maximum(MAX_PAGE_SIZE)),
      page_index: z.int().check(z.minimum(0), z.maximum(MAX_PAGE_INDEX)),
      home_organization_id: z.string().check(z.meta({ description: 'The authenticated organization (the partner, when a partner reads a merchant list).' })),
      resource_specific: z
        .object(Object.fromEntries(echoed.map((name) => [name, z.optional(z.string())])))
        .check(z.meta({ description: 'The applied filters (dates as yyyy-mm-ddThh:mm:ss), and the path scope where the route echoes it.' })),
    }),
    results: z.array(item).check(z.meta({ description: 'Newest first.' })),
    response: responseMemberSchema('Get Successful.'),
    links: z.object({
      self: z.url(),
      next: z.optional(z.url().check(z.meta({ description: 'Present only when more records exist: the same query with page_index+1 and a cursor.' }))),
    }),
  });
}
