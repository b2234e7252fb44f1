import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { StoredChange } from '#shared/domain/events/domain-events.ts';
import { EVENT_ITEM_KEYS } from './keys.ts';
import { paymethodFromItem } from './paymethod-item.ts';
import { documentFromItem } from './records.ts';

type Image = Record<string, AttributeValue>;

/**
 * One DynamoDB Streams record, in the shape Lambda delivers it (the local
 * stream poller builds the same shape). Only what the decoder reads.
 */
export interface StreamRecord {
  eventID?: string;
  dynamodb?: {
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    /** Seconds since the epoch. */
    ApproximateCreationDateTime?: number;
    SequenceNumber?: string;
  };
}

/**
 * The committed change a stream record carries, as records the repositories
 * would return (no keys, no ciphertext), or undefined for any item that is not
 * a paymethod or a document. The change id is a digest of the stream record's
 * eventID, which is unique per write and the same on every redelivery.
 */
export function storedChangeOf(record: StreamRecord): StoredChange | undefined {
  const stream = record.dynamodb;
  const keyImage = stream?.Keys ? unmarshall(stream.Keys as Image) : undefined;
  if (!stream || !record.eventID || !keyImage) return undefined;
  const entity = entityOf(keyImage.pk, keyImage.sk);
  if (!entity) return undefined;
  const before = stream.OldImage ? unmarshall(stream.OldImage as Image) : undefined;
  const after = stream.NewImage ? unmarshall(stream.NewImage as Image) : undefined;
  const base = {
    changeId: createHash('sha256').update(record.eventID).digest('hex').slice(0, 32),
    committedAt: new Date((stream.ApproximateCreationDateTime ?? 0) * 1000).toISOString(),
  };
  if (entity === 'paymethod') {
    return { entity, ...base, ...(before ? { before: paymethodFromItem(before) } : {}), ...(after ? { after: paymethodFromItem(after) } : {}) };
  }
  return { entity, ...base, ...(before ? { before: documentFromItem(before) } : {}), ...(after ? { after: documentFromItem(after) } : {}) };
}

function entityOf(pk: unknown, sk: unknown): 'paymethod' | 'document' | undefined {
  if (typeof pk !== 'string') return undefined;
  if (pk.startsWith(EVENT_ITEM_KEYS.paymethod.pkPrefix) && sk === EVENT_ITEM_KEYS.paymethod.sk) return 'paymethod';
  if (pk.startsWith(EVENT_ITEM_KEYS.document.pkPrefix) && sk === EVENT_ITEM_KEYS.document.sk) return 'document';
  return undefined;
}
