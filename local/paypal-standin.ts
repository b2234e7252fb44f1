/**
 * A loopback-only stand-in for the two PayPal REST calls the billing-agreement
 * adapter makes: the client-credentials token exchange and turning an approved
 * BA token into an agreement. Agreement ids are derived from the token, so the
 * same token gives the same id across runs and restarts, which keeps local
 * flows and their tests reproducible.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenAt, readBoundedBody } from './gate-server.ts';

export interface PaypalStandinOptions {
  /** 0 (the default) picks an ephemeral port. */
  port?: number;
  host?: string;
}

export interface PaypalStandin {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;
const BA_TOKEN_PATTERN = /^BA-[A-Za-z0-9]{17}$/;
/**
 * Well-formed billing-agreement tokens the stand-in refuses as PayPal refuses
 * one the buyer never approved (422), so a client can test that path locally
 * (docs/test-values.md). Any other well-formed token is approved.
 */
export const DECLINED_BILLING_AGREEMENT_TOKENS: readonly string[] = ['BA-DECLINED000000000'];
const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const TOKEN_LIFETIME_SECONDS = 32400;

/**
 * GET here answers how many access tokens were issued to each client id, as
 * JSON (the stand-in's own extension, never PayPal's): which credentials the
 * functions read from their secret shows here.
 */
export const CLIENTS_PATH = '/__standin/clients';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly payload: Record<string, unknown>,
  ) {
    super(typeof payload.message === 'string' ? payload.message : String(payload.error ?? status));
  }
}

/** PayPal's REST error shape, including the debug id its support asks for. */
function paypalError(status: number, name: string, message: string, details?: Array<Record<string, string>>): HttpError {
  return new HttpError(status, { name, message, debug_id: randomBytes(7).toString('hex'), ...(details ? { details } : {}) });
}

/** Same shape as PayPal's ids (`B-` and 17 uppercase letters or digits), stable per token. */
export function agreementIdFor(token: string): string {
  const digest = createHash('sha256').update(token, 'utf8').digest();
  let id = '';
  for (let index = 0; index < 17; index += 1) id += ID_ALPHABET[(digest[index] ?? 0) % ID_ALPHABET.length];
  return `B-${id}`;
}


const bodyTooLarge = (): HttpError => paypalError(413, 'REQUEST_ENTITY_TOO_LARGE', `Request body exceeds ${MAX_BODY_BYTES} bytes.`);

function send(res: ServerResponse, status: number, payload: Record<string, unknown>): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Paypal-Debug-Id': randomBytes(7).toString('hex'),
    // An oversized body may still be arriving; closing is cheaper than draining it.
    ...(status === 413 ? { Connection: 'close' } : {}),
  });
  res.end(text);
}

function basicClientId(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const separator = decoded.indexOf(':');
  // Any credentials are accepted, but they must at least be shaped like a client id and secret.
  if (separator < 1) return undefined;
  return decoded.slice(0, separator);
}

/** Its two operations are closures over the tokens it issued, which is why it runs past 80 lines. */
export async function startPaypalStandin(options: PaypalStandinOptions = {}): Promise<PaypalStandin> {
  const host = options.host ?? '127.0.0.1';
  // Tokens live as long as the process: expiry is not something the local runtime exercises.
  const issuedTokens = new Set<string>();
  const tokensByClient: Record<string, number> = {};

  const issueToken = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
    const raw = await readBoundedBody(req, MAX_BODY_BYTES, bodyTooLarge);
    const clientId = basicClientId(req.headers.authorization);
    if (clientId === undefined) {
      throw new HttpError(401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
    }
    const grantType = new URLSearchParams(raw.toString('utf8')).get('grant_type');
    if (grantType !== 'client_credentials') {
      throw new HttpError(400, { error: 'unsupported_grant_type', error_description: 'Grant Type is NULL or not supported' });
    }
    const accessToken = `A21AA${randomBytes(32).toString('base64url')}`;
    issuedTokens.add(accessToken);
    tokensByClient[clientId] = (tokensByClient[clientId] ?? 0) + 1;
    return {
      scope: 'https://uri.paypal.com/services/payments/billing-agreements',
      access_token: accessToken,
      token_type: 'Bearer',
      app_id: 'APP-LOCALSTANDIN000',
      expires_in: TOKEN_LIFETIME_SECONDS,
      nonce: randomUUID(),
    };
  };

  const createAgreement = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
    const raw = await readBoundedBody(req, MAX_BODY_BYTES, bodyTooLarge);
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (bearer === undefined || !issuedTokens.has(bearer)) {
      throw new HttpError(401, { error: 'invalid_token', error_description: 'Token signature verification failed' });
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw paypalError(400, 'MALFORMED_REQUEST', 'The request JSON is not well formed.');
    }
    const tokenId = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).token_id : undefined;
    if (typeof tokenId !== 'string' || !BA_TOKEN_PATTERN.test(tokenId)) {
      throw paypalError(400, 'INVALID_REQUEST', 'Request is not well-formed, syntactically incorrect, or violates schema.', [
        { field: 'token_id', issue: 'INVALID_PARAMETER_SYNTAX', description: 'The token_id is not a valid billing agreement token.' },
      ]);
    }
    if (DECLINED_BILLING_AGREEMENT_TOKENS.includes(tokenId)) {
      throw paypalError(422, 'UNPROCESSABLE_ENTITY', 'The requested action could not be performed, semantically incorrect, or failed business validation.', [
        { field: 'token_id', issue: 'BUYER_NOT_APPROVED', description: 'The buyer has not approved this billing agreement token.' },
      ]);
    }
    return { id: agreementIdFor(tokenId), state: 'ACTIVE' };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'POST' && path === '/v1/oauth2/token') {
      send(res, 200, await issueToken(req));
      return;
    }
    if (req.method === 'POST' && path === '/v1/billing-agreements/agreements') {
      send(res, 201, await createAgreement(req));
      return;
    }
    if (req.method === 'GET' && path === CLIENTS_PATH) {
      req.resume();
      send(res, 200, tokensByClient);
      return;
    }
    req.resume();
    throw paypalError(404, 'RESOURCE_NOT_FOUND', `No route for ${req.method ?? 'GET'} ${path}.`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) {
        send(res, error.status, error.payload);
        return;
      }
      console.error('PayPal stand-in internal error', error);
      send(res, 500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error has occurred.' });
    });
  });

  const url = await listenAt(server, host, options.port ?? 0);

  return {
    url,
    async close() {
      await closeServer(server);
    },
  };
}
