import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { eventsFilePath } from '../../local/runtime-file.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

/** One line of `.local/events-<port>.jsonl`: the event as an EventBridge rule target receives it. */
export interface PublishedEvent {
  version: string;
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  account: string;
  region: string;
  resources: unknown[];
  detail: Record<string, unknown> & { event_id: string; organization_id: string; occurred_at: string };
  /** The line as written, to search for what must never be in it. */
  raw: string;
}

export function eventsFile(): string {
  return eventsFilePath(repoRoot, inject('runtimePort'));
}

export async function readEvents(): Promise<PublishedEvent[]> {
  let text: string;
  try {
    text = await readFile(eventsFile(), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => ({ ...(JSON.parse(line) as Omit<PublishedEvent, 'raw'>), raw: line }));
}

/**
 * The first event that matches, once it is in the file. Bounded polling: the
 * publisher runs asynchronously; how soon is measured by `npm run bench:events`,
 * not asserted here.
 */
export async function awaitEvent(match: (event: PublishedEvent) => boolean, attempts = 600, delayMs = 50): Promise<PublishedEvent> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const found = (await readEvents()).find(match);
    if (found) return found;
    await sleep(delayMs);
  }
  throw new Error(`no matching event in ${eventsFile()} after ${attempts} reads`);
}

export const ofType = (detailType: string, member: string, id: unknown) => (event: PublishedEvent) => event['detail-type'] === detailType && event.detail[member] === id;

/** A record's GET answer without the envelope and links: what an event's detail must repeat. */
export function recordOf(body: Record<string, unknown>): Record<string, unknown> {
  const { response: _response, links: _links, ...record } = body;
  return record;
}
