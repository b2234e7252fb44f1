import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CardChange, CardUpdates, StoredCard, UpdateSource } from '#shared/domain/account-updater/ports.ts';
import { fingerprintOf } from '#shared/domain/paymethods/fingerprints.ts';
import type { Paymethod } from '#shared/domain/paymethods/model.ts';
import type { SealedSecret } from '#shared/domain/vault.ts';
import { DuplicateScopes } from './duplicate-scopes.ts';
import { LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, keys } from './keys.ts';
import { AU_SOURCE_ATTRIBUTE, SECRET_ATTRIBUTE, VERSION_ATTRIBUTE, paymethodFromItem, setEach } from './paymethod-item.ts';
import { paymethodItemsByToken } from './paymethod-reads.ts';
import type { TransactItem } from './write-conflicts.ts';
import { TRANSACTION_ITEMS, isConditionFailure, transact } from './write-conflicts.ts';
import { TABLE_KEY } from '../platform/table.ts';

type Item = Record<string, unknown>;

/** An Account Updater change whose commit is a transaction: its card update and its new duplicate-scope entry. */
interface JoiningChange {
  index: number;
  items: TransactItem[];
}

/** The Account Updater's side of the paymethod items: the only writer of cards' numbers and AU members. */
export class DynamoCardUpdates implements CardUpdates {
  private readonly scopes: DuplicateScopes;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.scopes = new DuplicateScopes(client, tableName);
  }

  /**
   * Cards as the Account Updater needs them: strongly consistent, in batches
   * of up to 100 tokens, with the sealed number (to compare a row's number)
   * and the file line that last changed each card. Unknown tokens are absent.
   */
  async findCards(tokens: readonly string[]): Promise<Map<string, StoredCard>> {
    const found = new Map<string, StoredCard>();
    for (const item of await paymethodItemsByToken(this.client, this.tableName, tokens, true)) {
      const paymethod = paymethodFromItem(item);
      const secret = item[SECRET_ATTRIBUTE] as SealedSecret | undefined;
      const source = item[AU_SOURCE_ATTRIBUTE] as UpdateSource | undefined;
      found.set(paymethod.paymethod_token, { paymethod, ...(secret ? { secret } : {}), ...(source ? { source } : {}) });
    }
    return found;
  }

  /**
   * Account Updater rows' commits. Each change is its own commit point: one
   * UpdateItem of the card, conditioned on the version read (and still a
   * card), that sets the card, the new sealed number, the file line it came
   * from and the sparse report index keys; everything the report and the
   * history need is on the card after it. A new number also adds the card to
   * its new fingerprint's duplicate-scope entry in the same commit, so those
   * changes are transactions: the ones passed together share TransactWriteItems calls
   * (no item twice in one, at most 100 items), one round trip for many rows
   * instead of one each. 'conflict' for a change whose card changed or went
   * away.
   */
  async applyAccountUpdates(changes: readonly CardChange[]): Promise<Array<'applied' | 'conflict'>> {
    const outcomes = new Array<'applied' | 'conflict'>(changes.length);
    const joining: JoiningChange[] = [];
    const updates: Array<Promise<void>> = [];
    changes.forEach((change, index) => {
      const { update, scopeJoin } = this.accountUpdateWrite(change);
      if (scopeJoin) joining.push({ index, items: [{ Update: update }, scopeJoin] });
      else updates.push(this.updateCard(update).then((outcome) => void (outcomes[index] = outcome)));
    });
    // Every write settles before a failure is reported: the caller's retry starts from a settled store.
    const settled = await Promise.allSettled([...updates, this.commitJoining(joining, outcomes)]);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return outcomes;
  }

  /** The card's conditional update for one change, and the duplicate-scope entry its new fingerprint joins. */
  private accountUpdateWrite({ current, card, secret, source, updatedAt }: CardChange) {
    const next: Paymethod = { ...current, card, updated_at: updatedAt, version: current.version + 1 };
    const names: Record<string, string> = { '#version': VERSION_ATTRIBUTE, '#type': 'paymethod_type' };
    const values: Record<string, unknown> = { ':expected': current.version, ':card': 'card' };
    const attributes: Item = {
      card: next.card,
      updated_at: next.updated_at,
      version: next.version,
      [AU_SOURCE_ATTRIBUTE]: source,
      ...(secret ? { [SECRET_ATTRIBUTE]: secret } : {}),
      ...keys.paymethodAuByOrganization(current.organization_id, card.au_updated_date!, current.paymethod_token),
      ...(current.location_id ? keys.paymethodAuByLocation(current.organization_id, current.location_id, card.au_updated_date!, current.paymethod_token) : {}),
      // A new number's fingerprint moves its filter key with it.
      ...(card.fingerprint ? keys.paymethodByFingerprint(current.organization_id, card.fingerprint, current.created_at, current.paymethod_token) : {}),
    };
    const set = setEach(attributes, names, values);
    // A later line of a file that puts back the number from before it, on a card that had no fingerprint
    // then, takes away the fingerprint the earlier line's number brought, and its filter key.
    const fingerprintRemoved = fingerprintOf(current) !== undefined && card.fingerprint === undefined;
    const removed = [...LEGACY_PAYMETHOD_LIST_KEY_ATTRIBUTES, ...(fingerprintRemoved ? Object.keys(keys.paymethodByFingerprint('', '', '', '')) : [])];
    const update = {
      TableName: this.tableName,
      Key: keys.paymethod(current.paymethod_token),
      // Never a list key: the location and organization lists (gsi8/gsi9) project nothing this write
      // changes, so it writes no entry of theirs; an item from before they existed leaves gsi1/gsi2 here.
      UpdateExpression: `${set} REMOVE ${removed.join(', ')}`,
      ConditionExpression: '#version = :expected AND #type = :card',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
    // Only a new number changes the fingerprint. The card joins its new entry in the same commit, so every
    // entry always names every card holding its fingerprint; it does not leave the old one, which keeps the
    // bulk path's row at two items. The duplicate check tells such former holders apart (holderOf).
    const scopeJoin = fingerprintOf(next) === fingerprintOf(current) ? undefined : this.scopes.join(next);
    return { update, scopeJoin };
  }

  private async updateCard(update: NonNullable<TransactItem['Update']>): Promise<'applied' | 'conflict'> {
    try {
      await this.client.send(new UpdateCommand(update));
      return 'applied';
    } catch (error) {
      if (isConditionFailure(error)) return 'conflict';
      throw error;
    }
  }

  /**
   * Commits changes that join a duplicate-scope entry, several to a
   * transaction, one transaction at a time (those of one call share items
   * only when they had to be split). A cancelled transaction names the items
   * that caused it: a change with one of them is a 'conflict' (its card
   * changed, or another transaction held one of its items); the others did
   * nothing and go again.
   */
  private async commitJoining(joining: readonly JoiningChange[], outcomes: Array<'applied' | 'conflict'>): Promise<void> {
    for (let pending = joining; pending.length > 0; ) {
      const again: JoiningChange[] = [];
      for (const group of sharedTransactions(pending)) {
        const outcome = await transact(this.client, group.flatMap((change) => change.items));
        if (outcome === 'ok') {
          for (const change of group) outcomes[change.index] = 'applied';
          continue;
        }
        let offset = 0;
        const before = again.length;
        for (const change of group) {
          const causes = outcome.slice(offset, (offset += change.items.length)).filter((code) => code !== undefined && code !== 'None');
          if (causes.length === 0) again.push(change);
          else if (causes.every((code) => code === 'ConditionalCheckFailed' || code === 'TransactionConflict')) outcomes[change.index] = 'conflict';
          else throw new Error(`Account Updater write cancelled: ${causes.join(', ')}`);
        }
        if (again.length - before === group.length) throw new Error('Account Updater transaction cancelled with no item named as the cause');
      }
      pending = again;
    }
  }
}

/**
 * Packs changes into as few transactions as fit: each change whole in one
 * transaction, at most TRANSACTION_ITEMS items, and no item twice in one
 * (two cards in one duplicate scope can touch the same entry), which
 * DynamoDB refuses.
 */
function sharedTransactions(changes: readonly JoiningChange[]): JoiningChange[][] {
  const transactions: Array<{ changes: JoiningChange[]; items: number; keys: Set<string> }> = [];
  for (const change of changes) {
    const changeKeys = change.items.map((item) => {
      const key = (item.Update ?? item.Delete ?? item.ConditionCheck)?.Key ?? item.Put?.Item;
      return `${String(key?.[TABLE_KEY.partitionKey])}\u0000${String(key?.[TABLE_KEY.sortKey])}`;
    });
    let transaction = transactions.find((open) => open.items + change.items.length <= TRANSACTION_ITEMS && changeKeys.every((key) => !open.keys.has(key)));
    if (!transaction) transactions.push((transaction = { changes: [], items: 0, keys: new Set() }));
    transaction.changes.push(change);
    transaction.items += change.items.length;
    for (const key of changeKeys) transaction.keys.add(key);
  }
  return transactions.map((transaction) => transaction.changes);
}
