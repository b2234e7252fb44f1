/**
 * After a revocation, nothing may still accept the credential: API Gateway
 * keeps each authorizer answer for the cache TTL (30 s), keyed on the auth
 * headers and the caller's address, so the revoke commands flush the stage's
 * whole authorizer cache (FlushStageAuthorizersCache) in AWS, twice, and the
 * emulator's cache locally (which keeps no answer computed across a flush).
 */
import { createHash, createHmac } from 'node:crypto';
import type { Hash, Hmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignatureV4 } from '@smithy/signature-v4';
import { AUTHORIZER_BUDGET_MS } from '#shared/platform/function-sizing.ts';
import { ADMIN_FLUSH_PATH } from '../local/runtime-file.ts';
import { appliedTarget } from './target.ts';

/** None outlives the authorizer's budget; the second flush comes a second after it. */
export const SECOND_FLUSH_AFTER_MS = AUTHORIZER_BUDGET_MS + 1_000;

export type FlushOutcome = { flushed: 'api-gateway'; restApiId: string; stage: string } | { flushed: 'local-runtime'; url: string } | { flushed: 'none'; reason: string };

export async function flushAuthorizerCache(): Promise<FlushOutcome> {
  const target = appliedTarget();
  if (target.kind === 'local') {
    const answer = await fetch(`${target.runtime.url}${ADMIN_FLUSH_PATH}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${target.runtime.adminToken}` },
      signal: AbortSignal.timeout(10_000),
    });
    if (answer.status !== 204) throw new Error(`the local runtime refused to flush its authorizer cache (HTTP ${answer.status})`);
    return { flushed: 'local-runtime', url: target.runtime.url };
  }
  const restApiId = process.env.REST_API_ID;
  const stage = process.env.API_STAGE;
  if (!restApiId || !stage) {
    return { flushed: 'none', reason: 'no RestApiId/StageName stack outputs (or REST_API_ID/API_STAGE): cached authorizer answers may accept it until they expire' };
  }
  await flushStageAuthorizersCache(restApiId, stage);
  // An authorizer invocation that read the credential before the revocation may hand its "allow" to the gateway
  // after the flush; none outlives the authorizer's budget, so a second flush after it catches that answer.
  await sleep(SECOND_FLUSH_AFTER_MS);
  await flushStageAuthorizersCache(restApiId, stage);
  return { flushed: 'api-gateway', restApiId, stage };
}

/**
 * `DELETE /restapis/{id}/stages/{stage}/cache/authorizers`, SigV4-signed with
 * the caller's AWS credentials. Signed here rather than through
 * @aws-sdk/client-api-gateway, which is not published at the version every
 * other @aws-sdk package here is pinned to; the credentials and region come
 * from the CloudFormation client's own default chain.
 */
async function flushStageAuthorizersCache(restApiId: string, stage: string): Promise<void> {
  const { CloudFormationClient } = await import('@aws-sdk/client-cloudformation');
  const client = new CloudFormationClient({});
  try {
    const region = await client.config.region();
    const signer = new SignatureV4({ service: 'apigateway', region, credentials: client.config.credentials, sha256: NodeSha256 });
    const hostname = `apigateway.${region}.amazonaws.com`;
    const path = `/restapis/${encodeURIComponent(restApiId)}/stages/${encodeURIComponent(stage)}/cache/authorizers`;
    const signed = await signer.sign({ method: 'DELETE', protocol: 'https:', hostname, path, headers: { host: hostname, accept: 'application/json' } });
    const answer = await fetch(`https://${hostname}${path}`, { method: 'DELETE', headers: signed.headers, signal: AbortSignal.timeout(15_000) });
    if (answer.status !== 202 && answer.status !== 200) {
      throw new Error(`FlushStageAuthorizersCache for ${restApiId}/${stage} failed: HTTP ${answer.status} ${(await answer.text()).slice(0, 300)}`);
    }
  } finally {
    client.destroy();
  }
}

/** The hash SignatureV4 needs (SHA-256, or HMAC-SHA-256 when given a key), from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = NodeSha256.create(secret);
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = NodeSha256.create(this.secret);
  }
  private static create(secret?: string | ArrayBuffer | ArrayBufferView): Hash | Hmac {
    return secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}
