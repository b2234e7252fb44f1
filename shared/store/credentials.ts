import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuthFailureCounter, FailureSubject, FailureTally } from '#shared/domain/authentication.ts';
import type { CredentialStore, StoredCredential } from '#shared/domain/credentials.ts';
import { Conflict } from '#shared/domain/errors.ts';
import { keys, withoutKeys } from './keys.ts';
import { batchGet } from './batch.ts';
import { listedNewestFirst, putNew, revokeListed } from './listed-items.ts';
import { TTL_ATTRIBUTE } from '../platform/table.ts';
import { isConditionFailure } from './write-conflicts.ts';

export class DynamoCredentialStore implements CredentialStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(accessId: string): Promise<StoredCredential | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: keys.credential(accessId), ConsistentRead: true }),
    );
    return Item ? (withoutKeys(Item) as StoredCredential) : undefined;
  }

  async create(credential: StoredCredential): Promise<void> {
    await putNew(
      this.client,
      {
        TableName: this.tableName,
        Item: {
          ...keys.credential(credential.api_access_id),
          ...keys.credentialByOrganization(credential.organization_id, credential.created_at, credential.api_access_id),
          ...credential,
        },
        // A credential hashed before versions were stored can never verify again: issuing its id anew (the seed,
        // which knows its key) replaces it, unless it was revoked.
        ConditionExpression: 'attribute_not_exists(pk) OR (attribute_not_exists(secret_mac_version) AND attribute_not_exists(revoked_at))',
      },
      () => new Conflict('CREDENTIAL_EXISTS', `api_access_id ${credential.api_access_id} is already in use`),
    );
  }

  async listByOrganization(organizationId: string): Promise<StoredCredential[]> {
    const items = await listedNewestFirst(this.client, this.tableName, keys.credentialByOrganization(organizationId, '', ''));
    return items.map((item) => withoutKeys(item) as unknown as StoredCredential);
  }

  /** Marks it revoked (kept for the record) and takes it out of the organization's list, in one write. */
  revoke(accessId: string, now: Date): Promise<boolean> {
    return revokeListed(this.client, this.tableName, keys.credential(accessId), [keys.credentialByOrganization('', '', '')], now);
  }

  /** At most one write a minute per credential: the condition refuses a fresher stamp written meanwhile. */
  async recordUse(accessId: string, now: Date, staleBefore: Date): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.credential(accessId),
          UpdateExpression: 'SET last_used_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revoked_at) AND (attribute_not_exists(last_used_at) OR last_used_at < :stale)',
          ExpressionAttributeValues: { ':now': now.toISOString(), ':stale': staleBefore.toISOString() },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

/**
 * Failed authentications per source address and per access id, one item per
 * subject and clock minute (so an attacker's address or target is its own
 * partition, never a shared hot key), a number per second of it
 * (`s<epoch second>`, 60 at most), removed by TTL. Reading is one consistent
 * BatchGetItem of each subject's items of this minute and the previous one;
 * counting is an atomic ADD that answers the whole item as it stands after
 * it, so the caller learns the exact count with its own failure in it.
 *
 * Within one process, failures that arrive while a count of the same subject
 * and second is in flight are counted together by the next ADD (of their
 * number), each answered with its own rank in it, as if they had been counted
 * one by one; and identical reads in flight are shared. A Lambda container
 * serves one request at a time, so in AWS this changes nothing; where many
 * attempts share a process (the local runtime) a burst costs a few writes per
 * subject instead of one each, which DynamoDB Local applies one at a time.
 */
export class DynamoAuthFailureCounter implements AuthFailureCounter {
  /** Per item and second: the failures waiting for the ADD in flight to finish, counted by the next one. */
  private readonly waiting = new Map<string, { failures: number; counted: Promise<FailureTally> }>();
  /** Per item and second: the last ADD sent or waiting, which the next one follows. */
  private readonly lastAdd = new Map<string, Promise<unknown>>();
  private readonly readsInFlight = new Map<string, Promise<Array<{ previous: FailureTally; current: FailureTally }>>>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  read(subjects: readonly FailureSubject[], minute: number): Promise<Array<{ previous: FailureTally; current: FailureTally }>> {
    const wanted = subjects.map((subject) => ({ previous: keys.authFailures(subject, minute - 1), current: keys.authFailures(subject, minute) }));
    const id = wanted.map(({ current }) => current.pk).join('\n');
    const inFlight = this.readsInFlight.get(id);
    if (inFlight) return inFlight;
    const read = (async () => {
      const items = await batchGet(this.client, this.tableName, wanted.flatMap(({ previous, current }) => [previous, current]), { consistentRead: true });
      const byPartition = new Map(items.map((item) => [item.pk, item]));
      return wanted.map(({ previous, current }) => ({ previous: tallyOf(byPartition.get(previous.pk)), current: tallyOf(byPartition.get(current.pk)) }));
    })();
    this.readsInFlight.set(id, read);
    void read.then(
      () => this.readsInFlight.delete(id),
      () => this.readsInFlight.delete(id),
    );
    return read;
  }

  add(subjects: readonly FailureSubject[], minute: number, second: number): Promise<FailureTally[]> {
    return Promise.all(subjects.map((subject) => this.addOne(keys.authFailures(subject, minute), minute, second)));
  }

  private async addOne(key: { pk: string; sk: string }, minute: number, second: number): Promise<FailureTally> {
    const id = `${key.pk}#${second}`;
    let batch = this.waiting.get(id);
    if (!batch) {
      const after = this.lastAdd.get(id) ?? Promise.resolve();
      const created: { failures: number; counted: Promise<FailureTally> } = {
        failures: 0,
        counted: after.then(() => {
          // From here on, new failures wait for the next ADD.
          this.waiting.delete(id);
          return this.send(key, minute, second, created.failures);
        }),
      };
      batch = created;
      this.waiting.set(id, batch);
      const settled = batch.counted.catch(() => undefined);
      this.lastAdd.set(id, settled);
      void settled.then(() => {
        if (this.lastAdd.get(id) === settled) this.lastAdd.delete(id);
      });
    }
    batch.failures += 1;
    const rank = batch.failures;
    const tally = await batch.counted;
    // As if the failures of this ADD had been counted one by one, in the order they came.
    const later = batch.failures - rank;
    return tally.map(([at, failures]) => [at, at === second ? failures - later : failures] as const);
  }

  private async send(key: { pk: string; sk: string }, minute: number, second: number, failures: number): Promise<FailureTally> {
    const { Attributes } = await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: 'ADD #second :failures SET #ttl = if_not_exists(#ttl, :ttl)',
        ExpressionAttributeNames: { '#second': `s${second}`, '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':failures': failures, ':ttl': (minute + 2) * 60 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return tallyOf(Attributes);
  }
}

function tallyOf(item: Record<string, unknown> | undefined): Array<[number, number]> {
  return Object.entries(item ?? {}).flatMap(([name, value]): Array<[number, number]> => {
    const second = /^s(\d+)$/.exec(name)?.[1];
    return second !== undefined && typeof value === 'number' ? [[Number(second), value]] : [];
  });
}
