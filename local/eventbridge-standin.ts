/**
 * A loopback-only stand-in for EventBridge's PutEvents, speaking the
 * service's JSON 1.1 wire protocol, so the unmodified
 * `@aws-sdk/client-eventbridge` reaches it through AWS_ENDPOINT_URL_EVENTBRIDGE.
 * Each accepted entry becomes one line of a JSON Lines file: the event as a
 * rule's target would receive it (`version`, `id`, `detail-type`, `source`,
 * `account`, `time`, `region`, `resources`, `detail`). Lines are appended in
 * the order entries arrive, each call's lines in one write. The file can be
 * named after start (the runtime learns its port late); until then accepted
 * entries wait in memory. The file is created owner-only (0600). Like every
 * local endpoint it is a gate (local/aws-json-standin.ts): every call is
 * signed (SigV4, checked as EventBridge checks it, local/sigv4.ts) by a
 * credential the runtime issued.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startAwsJsonStandin } from './aws-json-standin.ts';
import type { Log } from './gate-server.ts';
import { AwsServiceError } from './gate-server.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';
import type { SignatureVerifier } from './sigv4.ts';

export interface EventBridgeStandinOptions {
  /** Buses that exist; entries for any other bus fail as they would in AWS. */
  busNames: readonly string[];
  region?: string;
  /** Checks each call's signature. */
  verifier: SignatureVerifier;
  log: Log;
  /** The bus's rules and their targets: each accepted event, as a target receives it. */
  route?: (event: Record<string, unknown>) => void;
}

export interface EventBridgeStandin {
  url: string;
  /** Names the file events are appended to, and writes what was accepted before. */
  writeTo(file: string): Promise<void>;
  /** Entries accepted since start. */
  readonly accepted: number;
  close(): Promise<void>;
}

/** EventBridge's own limits: 10 entries a call, 256 KB a call. */
const MAX_ENTRIES = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

interface RequestEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Resources?: unknown;
  Time?: unknown;
}

export async function startEventBridgeStandin(options: EventBridgeStandinOptions): Promise<EventBridgeStandin> {
  const region = options.region ?? 'us-east-1';
  const buses = new Set(options.busNames.flatMap((name) => [name, `arn:aws:events:${region}:${LOCAL_ACCOUNT_ID}:event-bus/${name}`]));
  let accepted = 0;
  let file: string | undefined;
  let held = '';
  // Appends run one after another, in arrival order.
  let writes: Promise<void> = Promise.resolve();
  const append = (text: string) => {
    if (file === undefined) held += text;
    else {
      const target = file;
      writes = writes.then(() => appendFile(target, text, 'utf8'));
    }
    return writes;
  };

  const putEvents = async (body: { Entries?: unknown }) => {
    if (!Array.isArray(body.Entries) || body.Entries.length < 1 || body.Entries.length > MAX_ENTRIES) {
      throw new AwsServiceError('ValidationException', `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${MAX_ENTRIES}`);
    }
    if (Buffer.byteLength(JSON.stringify(body.Entries)) > MAX_REQUEST_BYTES) {
      throw new AwsServiceError('ValidationException', `Total size of the entries in the request is over the limit of ${MAX_REQUEST_BYTES} bytes`);
    }
    const lines: string[] = [];
    const results = (body.Entries as RequestEntry[]).map((entry) => {
      const refused = checkEntry(entry, buses);
      if (refused) return { ErrorCode: refused.code, ErrorMessage: refused.message };
      const id = randomUUID();
      const event = {
        version: '0',
        id,
        'detail-type': entry.DetailType,
        source: entry.Source,
        account: LOCAL_ACCOUNT_ID,
        time: eventTime(entry.Time),
        region,
        resources: Array.isArray(entry.Resources) ? entry.Resources : [],
        detail: JSON.parse(entry.Detail as string) as unknown,
      };
      lines.push(JSON.stringify(event));
      options.route?.(event);
      return { EventId: id };
    });
    if (lines.length > 0) {
      await append(lines.map((line) => `${line}\n`).join(''));
      accepted += lines.length;
    }
    return { FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length, Entries: results };
  };

  const server = await startAwsJsonStandin({
    name: 'EventBridge',
    port: 0,
    service: { signingName: 'events', targetPrefix: 'AWSEvents', unknownOperation: 'UnknownOperationException', internalError: { type: 'InternalException', message: 'Internal error in the local EventBridge stand-in.' } },
    verifier: options.verifier,
    log: options.log,
    operations: new Map([['PutEvents', putEvents]]),
    closed: () => writes.catch(() => undefined),
  });
  return {
    url: server.url,
    async writeTo(target: string) {
      await mkdir(path.dirname(target), { recursive: true });
      // Exists from now on, so a reader can follow it before the first event; only its owner may read it.
      await appendFile(target, '', { encoding: 'utf8', mode: 0o600 });
      await chmod(target, 0o600);
      file = target;
      const pending = held;
      held = '';
      if (pending) await append(pending);
    },
    get accepted() {
      return accepted;
    },
    close: server.close,
  };
}

function checkEntry(entry: RequestEntry, buses: ReadonlySet<string>): { code: string; message: string } | undefined {
  if (typeof entry.Source !== 'string' || entry.Source === '') return { code: 'InvalidArgument', message: 'Parameter Source is not valid. Reason: Source is a required argument.' };
  if (typeof entry.DetailType !== 'string' || entry.DetailType === '') return { code: 'InvalidArgument', message: 'Parameter DetailType is not valid. Reason: DetailType is a required argument.' };
  if (typeof entry.Detail !== 'string' || !isJsonObject(entry.Detail)) return { code: 'MalformedDetail', message: 'Detail is malformed.' };
  const bus = typeof entry.EventBusName === 'string' && entry.EventBusName !== '' ? entry.EventBusName : 'default';
  if (!buses.has(bus)) return { code: 'NotAuthorizedForSourceException', message: `Event bus ${bus} does not exist.` };
  return undefined;
}

function isJsonObject(text: string): boolean {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** The JSON protocol carries timestamps as epoch seconds; events show them as ISO 8601 to the second, as EventBridge does. */
function eventTime(time: unknown): string {
  const date = typeof time === 'number' ? new Date(time * 1000) : new Date();
  return `${date.toISOString().slice(0, 19)}Z`;
}
