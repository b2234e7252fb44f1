import { InvalidRequest } from '../errors.ts';
import type { Vault } from '../vault.ts';
import type { Fingerprinter } from './fingerprints.ts';
import type { Paymethod } from './model.ts';
import type { PaymethodReads, PaymethodUpdates } from './ports.ts';
import type { PaymethodAddress } from './read.ts';
import { getPaymethod } from './read.ts';
import { assertExpiryCurrentOrFuture, parseBody, updateBodySchema } from './validation.ts';

export interface UpdatePaymethodDeps {
  paymethods: Pick<PaymethodReads, 'get' | 'sealedNumber'>;
  updates: PaymethodUpdates;
  clock: () => Date;
  /** An echeck's new routing number is a new account: its fingerprint is computed again from the sealed number. */
  vault: Pick<Vault, 'open'>;
  fingerprinter: Fingerprinter;
}

/**
 * Partial update: only the members sent change. The account number never
 * changes here (400); a CVV sent with a card update was validated and is
 * dropped. Moving to another customer is handled by the repository in one
 * transaction so both customers keep a coherent default.
 */
export async function updatePaymethod(address: PaymethodAddress, body: Record<string, unknown>, deps: UpdatePaymethodDeps): Promise<Paymethod> {
  const now = deps.clock();
  const { card, echeck, ...top } = parseBody(updateBodySchema, body, now);
  const current = await getPaymethod(address, deps);
  const next: Paymethod = { ...current, ...top, updated_at: now.toISOString() };
  if (card) {
    if (!current.card) throw wrongKind('card', current);
    next.card = { ...current.card, ...card };
    // One part alone is checked against the stored other part.
    if (card.expire_month !== undefined || card.expire_year !== undefined) assertExpiryCurrentOrFuture(next.card.expire_month, next.card.expire_year, now);
  }
  if (echeck) {
    if (!current.echeck) throw wrongKind('echeck', current);
    next.echeck = { ...current.echeck, ...echeck };
    // The fingerprint names the routing and account number together: another routing number is another
    // account, and the repository moves the record's duplicate-scope entry and fingerprint key with it.
    if (next.echeck.routing_number !== current.echeck.routing_number) {
      const sealed = await deps.paymethods.sealedNumber(current.paymethod_token);
      if (sealed) {
        const accountNumber = await deps.vault.open(sealed, { organizationId: current.organization_id, recordToken: current.paymethod_token });
        next.echeck.fingerprint = await deps.fingerprinter.fingerprint(current.organization_id, { kind: 'echeck', routingNumber: next.echeck.routing_number, accountNumber });
      }
    }
  }
  return deps.updates.update(current, next);
}

function wrongKind(member: 'card' | 'echeck', current: Paymethod): InvalidRequest {
  return new InvalidRequest([{ field: member, message: `cannot be sent: the paymethod is ${current.paymethod_type === 'echeck' ? 'an echeck' : `a ${current.paymethod_type}`}` }]);
}
