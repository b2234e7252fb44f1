import { SignatureV4 } from '@smithy/signature-v4';
import type { SigningCredential } from '../../local/signing-credentials.ts';
import { NodeSha256 } from '../../local/sigv4.ts';

/**
 * A raw request to a local AWS endpoint, signed (SigV4, headers and body) as
 * an SDK client would sign it, for tests that send what no SDK client would.
 */
export async function signedFetch(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; signingDate?: Date },
  credential: SigningCredential,
  service: string,
): Promise<Response> {
  const target = new URL(url);
  const signer = new SignatureV4({ credentials: credential, region: 'us-east-1', service, sha256: NodeSha256, uriEscapePath: service !== 's3', applyChecksum: service === 's3' });
  const query = Object.fromEntries(target.searchParams);
  const signed = await signer.sign({
    method: init.method ?? 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    port: Number(target.port),
    path: target.pathname,
    query,
    headers: { ...init.headers, host: target.host },
    body: init.body,
  }, { signingDate: init.signingDate });
  const headers = { ...signed.headers };
  delete headers.host;
  return fetch(url, { method: init.method ?? 'POST', headers, body: init.body });
}
