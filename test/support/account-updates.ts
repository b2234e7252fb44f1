import { PutCommand } from '@aws-sdk/lib-dynamodb';

/**
 * Leaves a card as an Account Updater run would (its au_* members and the AU
 * report's index keys, in the store's own item layout) without running one, so
 * a read test can pick the update's instant. The item's ciphertext is not
 * kept: the reads under test never open it.
 */
export async function recordAccountUpdate(
  tableName: string,
  paymethodToken: string,
  update: { au_code: string; au_description: string; au_updated_date: Date },
): Promise<void> {
  const { dynamo } = await import('#shared/aws/dynamodb.ts');
  const { DynamoPaymethodStore, paymethodItem } = await import('#shared/store/paymethods.ts');
  const current = await new DynamoPaymethodStore(dynamo, tableName).get(paymethodToken);
  if (!current?.card) throw new Error(`no card paymethod ${paymethodToken}`);
  const card = { ...current.card, au_code: update.au_code, au_description: update.au_description, au_updated_date: update.au_updated_date.toISOString() };
  await dynamo.send(new PutCommand({ TableName: tableName, Item: paymethodItem({ ...current, card, version: current.version + 1 }, undefined) }));
}
