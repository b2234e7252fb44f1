import type { PaymethodDeletes, PaymethodReads } from './ports.ts';
import type { PaymethodAddress } from './read.ts';
import { getPaymethod } from './read.ts';

/** Removes the record and its ciphertext; 404 when the path does not name it. */
export async function deletePaymethod(address: PaymethodAddress, deps: { paymethods: Pick<PaymethodReads, 'get'>; deletes: PaymethodDeletes }): Promise<{ paymethod_token: string }> {
  const current = await getPaymethod(address, deps);
  await deps.deletes.delete(current);
  return { paymethod_token: current.paymethod_token };
}
