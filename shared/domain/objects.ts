/** Drops members whose value is undefined, so a view never carries an explicit `undefined`. */
export function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== undefined)) as T;
}
