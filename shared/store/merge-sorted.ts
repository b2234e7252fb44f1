/**
 * The items of several sorted streams as one sorted stream, by `keyOf`, in
 * `order` (ties: the earlier stream's item first). It holds one item per
 * stream; a consumer that stops early (a page is full) ends every stream,
 * so none is read further.
 */
export async function* mergeSorted<T>(streams: ReadonlyArray<AsyncIterator<T>>, keyOf: (item: T) => string, order: 'ascending' | 'descending' = 'ascending'): AsyncGenerator<T, void, undefined> {
  try {
    const heads = await Promise.all(streams.map((stream) => stream.next()));
    for (;;) {
      let best = -1;
      let bestKey = '';
      heads.forEach((head, index) => {
        if (head.done) return;
        const key = keyOf(head.value);
        if (best < 0 || (order === 'ascending' ? key < bestKey : key > bestKey)) [best, bestKey] = [index, key];
      });
      if (best < 0) return;
      yield (heads[best] as IteratorYieldResult<T>).value;
      heads[best] = await streams[best]!.next();
    }
  } finally {
    await Promise.all(streams.map((stream) => stream.return?.(undefined)));
  }
}
