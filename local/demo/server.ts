/**
 * The demo checkout, served by the local runtime only (never deployed, not in the
 * route table):
 *
 *   GET  /demo/checkout        the page: a card form that tokenizes in the browser
 *   POST /demo/merchant/pay    THE MERCHANT'S SERVER, played by the runtime: it holds
 *                              the demo organization's secret credentials, turns the
 *                              one-time token into a paymethod and reads it back
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { build, stop } from 'esbuild';
import type { IssuedCredential } from '#shared/domain/credentials.ts';
import type { PublishableKey } from '#shared/domain/publishable-keys.ts';

export interface DemoOptions {
  /** The demo organization's secret credential: used only by the merchant endpoint, never sent to the page. */
  merchantCredential: IssuedCredential;
  publishableKey: PublishableKey;
  /** Version (content hash) of the served library, so the page pins `?v=`. */
  scriptVersion: string;
  /** Where the merchant's server reaches the API (the runtime's own address). */
  apiUrl: () => string;
}

const MAX_MERCHANT_BODY_BYTES = 4096;

export async function demoRoutes(options: DemoOptions): Promise<(req: http.IncomingMessage, res: http.ServerResponse) => Promise<boolean>> {
  const page = readFileSync(new URL('./checkout.html', import.meta.url), 'utf8');
  const css = readFileSync(new URL('./checkout.css', import.meta.url), 'utf8');
  const script = await bundleBrowserScript();
  const config = {
    publishableKey: options.publishableKey.publishable_key,
    organizationId: options.publishableKey.organization_id,
    locationId: options.publishableKey.location_id,
    scriptUrl: `/v3/js/tokenize.js?v=${options.scriptVersion}`,
    allowedOrigins: options.publishableKey.allowed_origins,
  };
  // JSON inside <script>: '<' escaped so no value can close the element.
  const html = page.replace('{{CONFIG}}', JSON.stringify(config).replace(/</g, '\\u003c'));

  return async (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    if ((pathname === '/demo' || pathname === '/demo/') && method === 'GET') return send(res, 302, '', { Location: '/demo/checkout' });
    if (pathname === '/demo/checkout' && method === 'GET') return send(res, 200, html, { 'Content-Type': 'text/html; charset=utf-8', ...PAGE_HEADERS });
    if (pathname === '/demo/checkout.js' && method === 'GET') return send(res, 200, script, { 'Content-Type': 'text/javascript; charset=utf-8' });
    if (pathname === '/demo/checkout.css' && method === 'GET') return send(res, 200, css, { 'Content-Type': 'text/css; charset=utf-8' });
    if (pathname === '/demo/merchant/pay' && method === 'POST') return merchantPay(req, res, options);
    return false;
  };
}

/** The page loads its own script and styles and talks to this origin only. */
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

async function bundleBrowserScript(): Promise<string> {
  const result = await build({
    entryPoints: [new URL('./browser/checkout.ts', import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020'],
    write: false,
  });
  // Otherwise esbuild's child process lives as long as the runtime.
  await stop();
  return result.outputFiles[0]?.text ?? '';
}

/**
 * The merchant's server. A real one would also charge the card; this one saves it
 * (one-time token -> permanent paymethod) with its secret credentials and reads it
 * back, so the page can show what the merchant stores: a token and a masked number.
 */
async function merchantPay(req: http.IncomingMessage, res: http.ServerResponse, options: DemoOptions): Promise<true> {
  let body: { one_time_token?: unknown; name_on_card?: unknown };
  try {
    body = JSON.parse(await readSmallBody(req)) as { one_time_token?: unknown; name_on_card?: unknown };
  } catch {
    return sendJson(res, 400, { response: { response_desc: 'the body must be JSON with one_time_token' } });
  }
  if (typeof body.one_time_token !== 'string') return sendJson(res, 400, { response: { response_desc: 'one_time_token is required' } });
  // The spec requires the name beside a one-time token: the checkout sends it with the token (it is no card data).
  if (typeof body.name_on_card !== 'string') return sendJson(res, 400, { response: { response_desc: 'name_on_card is required' } });

  const { merchantCredential: credential, publishableKey } = options;
  const headers = {
    Authorization: `Basic ${Buffer.from(`${credential.api_access_id}:${credential.api_secure_key}`).toString('base64')}`,
    'X-Service-Auth-Organization-Id': credential.organization_id,
    'Content-Type': 'application/json',
  };
  const location = `${options.apiUrl()}/v3/organizations/${publishableKey.organization_id}/locations/${publishableKey.location_id}`;
  const created = await fetch(`${location}/paymethods`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ label: 'Demo checkout', notes: 'Saved by the demo merchant server', card: { one_time_token: body.one_time_token, name_on_card: body.name_on_card } }),
  });
  const createdBody = (await created.json()) as { paymethod_token?: string };
  if (created.status !== 201 || !createdBody.paymethod_token) return sendJson(res, created.status, createdBody);

  const fetched = await fetch(`${location}/paymethods/${createdBody.paymethod_token}`, { headers });
  return sendJson(res, fetched.status, await fetched.json());
}

async function readSmallBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_MERCHANT_BODY_BYTES) throw new Error('too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): true {
  return send(res, status, JSON.stringify(body), { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
}

function send(res: http.ServerResponse, status: number, body: string, headers: Record<string, string>): true {
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
  return true;
}
