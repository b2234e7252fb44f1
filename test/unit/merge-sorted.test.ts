import { describe, expect, it } from 'vitest';
import { mergeSorted } from '#shared/store/merge-sorted.ts';

/** A sorted stream that says when it was read and when it was ended. */
function stream(name: string, keys: string[], log: string[]): AsyncGenerator<{ key: string; from: string }, void, undefined> {
  return (async function* () {
    try {
      for (const key of keys) {
        log.push(`${name} read ${key}`);
        yield { key, from: name };
      }
    } finally {
      log.push(`${name} ended`);
    }
  })();
}

const collect = async <T>(items: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('mergeSorted', () => {
  it('merges ascending and descending streams into one order, an equal key from the earlier stream first', async () => {
    const log: string[] = [];
    const up = await collect(mergeSorted([stream('a', ['1', '3', '5'], log), stream('b', ['2', '3', '6'], log), stream('c', [], log)], (item) => item.key));
    expect(up.map((item) => `${item.key}${item.from}`)).toEqual(['1a', '2b', '3a', '3b', '5a', '6b']);
    const down = await collect(mergeSorted([stream('a', ['5', '3'], log), stream('b', ['6', '3', '1'], log)], (item) => item.key, 'descending'));
    expect(down.map((item) => `${item.key}${item.from}`)).toEqual(['6b', '5a', '3a', '3b', '1b']);
  });

  it('holds one item per stream, and a consumer that stops early ends every stream', async () => {
    const log: string[] = [];
    const taken: string[] = [];
    for await (const item of mergeSorted([stream('a', ['1', '4', '7'], log), stream('b', ['2', '5', '8'], log)], (candidate) => candidate.key)) {
      taken.push(item.key);
      if (taken.length === 2) break;
    }
    expect(taken).toEqual(['1', '2']);
    // No stream was read further than the item it holds, and both were ended.
    expect(log.filter((line) => line.includes('read'))).toEqual(['a read 1', 'b read 2', 'a read 4']);
    expect(log.filter((line) => line.endsWith('ended')).sort()).toEqual(['a ended', 'b ended']);
  });
});
