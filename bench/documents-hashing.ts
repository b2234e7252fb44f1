/**
 * `npm run bench:documents-hashing`: what hashing the file as it streams
 * (`sha256`) adds to a single-request upload of the largest file that request
 * carries (4,716,499 bytes, as bench/documents.ts finds it), through the local
 * runtime started in this process (HTTP, emulator, authorizer, handler,
 * s3rver, DynamoDB Local).
 *
 * "Without" is the same code with the multipart parser's hasher replaced by
 * one that does nothing (node:crypto's createHash, patched for calls from
 * shared/http/multipart.ts only, so that SigV4 signing still hashes); the run
 * checks that the stored sha256 is the real one with, and not without.
 * Uploads alternate with/without (the order flipping every pair), BENCH_PAIRS
 * pairs per run, three runs; each run's figure is median(with) / median(without),
 * and the result is the median of the three.
 *
 * After each upload, untimed, the bench waits until the document reads
 * `scan_status: "clean"` (the local scanner, polled every 25 ms), so no scan
 * runs under the next upload; that wait is the other figure: the time from
 * an upload's answer to `clean`, for these 4.7 MB files.
 */
import { createHash } from 'node:crypto';
import type * as nodeCrypto from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { startLocalRuntime } from '../local/runtime.ts';
import { BOUNDARY, multipartBody, uploadParts } from '../test/fixtures/documents.ts';
import { recordRun } from './results.ts';
import { median } from './support.ts';

const PAIRS = Number(process.env.BENCH_PAIRS ?? 7);
const RUNS = 3;
const SIZE = 4_716_499;
const ORG = 'org_bench';
const credentials = { api_access_id: 'bench-id', api_secure_key: 'bench-key' };

// The parser's hasher, switched off for the "without" uploads.
const crypto = createRequire(import.meta.url)('node:crypto') as typeof nodeCrypto;
const realCreateHash = crypto.createHash;
let hashing = true;
const inert = { update: () => inert, digest: () => `unhashed${Math.random().toString(16).slice(2)}` };
crypto.createHash = ((algorithm: string, options?: unknown) =>
  !hashing && new Error().stack?.includes('shared/http/multipart.ts') ? inert : realCreateHash(algorithm, options as never)) as typeof crypto.createHash;
syncBuiltinESMExports();

const seed = { organizations: [{ organization_id: ORG, credentials: [credentials] }] };
const runtime = await startLocalRuntime({ port: 0, seed });
try {
  const authorization = `Basic ${Buffer.from(`${credentials.api_access_id}:${credentials.api_secure_key}`).toString('base64')}`;
  const file = Buffer.alloc(SIZE, 0x61);
  const expected = createHash('sha256').update(file).digest('hex');
  let uploads = 0;
  async function upload(withHashing: boolean): Promise<number> {
    hashing = withHashing;
    const body = multipartBody(uploadParts({ resource: 'application', resource_id: `app_h${(uploads += 1)}` }, { name: 'bench.txt', contentType: 'text/plain', bytes: file }), BOUNDARY);
    const started = performance.now();
    const answer = await fetch(`${runtime.url}/v3/organizations/${ORG}/documents`, {
      method: 'POST',
      headers: { Authorization: authorization, 'X-Service-Auth-Organization-Id': ORG, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      body,
    });
    const answered = (await answer.json()) as { sha256?: string; document_id: string };
    const elapsed = performance.now() - started;
    if (answer.status !== 201) throw new Error(`upload answered ${answer.status}`);
    if ((answered.sha256 === expected) !== withHashing) throw new Error(`sha256 ${answered.sha256} ${withHashing ? 'is not' : 'is'} the file's: the switch did not take`);
    // Untimed: wait for the local scanner to report, so its read of this file never runs under the next upload.
    toClean.push(await untilClean(answered.document_id));
    return elapsed;
  }

  const toClean: number[] = [];
  async function untilClean(id: string): Promise<number> {
    const answered = performance.now();
    for (;;) {
      const read = (await (await fetch(`${runtime.url}/v3/organizations/${ORG}/documents/${id}`, { headers: { Authorization: authorization, 'X-Service-Auth-Organization-Id': ORG } })).json()) as { scan_status?: string };
      if (read.scan_status === 'clean') return performance.now() - answered;
      if (performance.now() - answered > 10_000) throw new Error(`${id} not clean within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  await upload(true);
  await upload(false);
  const runs: Array<{ with_ms: number; without_ms: number; ratio: number }> = [];
  for (let run = 0; run < RUNS; run += 1) {
    const withTimes: number[] = [];
    const withoutTimes: number[] = [];
    for (let pair = 0; pair < PAIRS; pair += 1) {
      const order = pair % 2 === 0 ? [true, false] : [false, true];
      for (const withHashing of order) (withHashing ? withTimes : withoutTimes).push(await upload(withHashing));
    }
    const [withMs, withoutMs] = [median(withTimes), median(withoutTimes)];
    runs.push({ with_ms: Math.round(withMs * 10) / 10, without_ms: Math.round(withoutMs * 10) / 10, ratio: Math.round((withMs / withoutMs) * 1000) / 1000 });
  }
  // The hashing alone, in the 64 KiB slices the parser is fed: what the ratio above should reflect once the noise is out.
  const hashOnly: number[] = [];
  for (let round = 0; round < 9; round += 1) {
    const started = performance.now();
    const hash = realCreateHash('sha256');
    for (let offset = 0; offset < file.length; offset += 64 * 1024) hash.update(file.subarray(offset, offset + 64 * 1024));
    hash.digest('hex');
    hashOnly.push(performance.now() - started);
  }
  const figures = {
    hash_only_ms: Math.round(median(hashOnly) * 10) / 10,
    upload_to_clean_ms: { median: Math.round(median(toClean)), max: Math.round(Math.max(...toClean)), uploads: toClean.length },
    file_bytes: SIZE,
    pairs_per_run: PAIRS,
    runs,
    median_ratio: median(runs.map((entry) => entry.ratio)),
    goal_ratio: 1.05,
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  recordRun('documents-hashing', figures);
} finally {
  hashing = true;
  await runtime.close();
}
