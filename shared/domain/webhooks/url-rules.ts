import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { InvalidRequest } from '../errors.ts';
import { MAX_URL_LENGTH } from './model.ts';

/**
 * The rules an endpoint URL keeps (the contract's "URLs"): https, at most
 * 2,048 characters, no user or password, a host that is and resolves to public
 * unicast addresses only. ipaddr.js classifies addresses (the same library and
 * reading the delivery agent, request-filtering-agent, applies to every
 * connection): anything but `unicast` is refused, which covers loopback,
 * RFC 1918, RFC 4193, link-local, multicast, reserved and IPv4-mapped forms.
 */
export interface UrlPolicy {
  /** Local runs only (the function's environment): `http://` and loopback hosts are allowed, so receivers can run on the same machine. */
  readonly allowLoopback: boolean;
}

/** Resolves a host name to its addresses (DNS); the domain never resolves itself. */
export type HostResolver = (host: string) => Promise<readonly string[]>;

const LOOPBACK_NAMES = new Set(['localhost']);

const invalid = (message: string) => new InvalidRequest([{ field: 'url', message }], 'INVALID_WEBHOOK_URL');

/** Whether an address may receive deliveries under the policy. */
export function isDeliverableAddress(address: string, policy: UrlPolicy): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (range === 'unicast') return true;
  if (policy.allowLoopback) {
    if (parsed.kind() === 'ipv6' && range === 'ipv4Mapped') parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    return parsed.range() === 'loopback';
  }
  return false;
}

/** The URL's shape alone (no DNS): what a registration checks first. */
export function checkUrlShape(raw: string, policy: UrlPolicy): URL {
  if (raw.length > MAX_URL_LENGTH) throw invalid(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('must be an absolute https URL');
  }
  const loopbackAllowed = policy.allowLoopback && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopbackAllowed)) throw invalid('must use https');
  if (url.username !== '' || url.password !== '') throw invalid('must not carry a user name or password');
  if (url.hash !== '') throw invalid('must not carry a fragment');
  const literal = hostLiteral(url.hostname);
  if (literal !== undefined && !isDeliverableAddress(literal, policy)) throw invalid('must not name a loopback, private, link-local, multicast or other non-public address');
  if (literal === undefined && LOOPBACK_NAMES.has(url.hostname.toLowerCase()) && !policy.allowLoopback) throw invalid('must not name a loopback host');
  return url;
}

/** Shape, then every address the host resolves to (a name that resolves to one private address is refused). */
export async function checkEndpointUrl(raw: string, policy: UrlPolicy, resolve: HostResolver): Promise<string> {
  const url = checkUrlShape(raw, policy);
  if (hostLiteral(url.hostname) !== undefined) return url.href;
  if (policy.allowLoopback && LOOPBACK_NAMES.has(url.hostname.toLowerCase())) return url.href;
  let addresses: readonly string[];
  try {
    addresses = await resolve(url.hostname);
  } catch {
    throw invalid('names a host that does not resolve');
  }
  if (addresses.length === 0) throw invalid('names a host that does not resolve');
  if (!addresses.every((address) => isDeliverableAddress(address, policy))) throw invalid('resolves to a loopback, private, link-local, multicast or other non-public address');
  return url.href;
}

function hostLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) !== 0 ? bare : undefined;
}

function isLoopbackHost(hostname: string): boolean {
  const literal = hostLiteral(hostname);
  return literal !== undefined ? isDeliverableAddress(literal, { allowLoopback: true }) && ipaddr.parse(literal).range() !== 'unicast' : LOOPBACK_NAMES.has(hostname.toLowerCase());
}
