import { inject } from 'vitest';

export const PARTNER = { organizationId: 'org_100', accessId: 'partner-id', secureKey: 'partner-key' } as const;
export const MERCHANT = { organizationId: 'org_200', accessId: 'merchant-id', secureKey: 'merchant-key' } as const;
export const UNRELATED = { organizationId: 'org_300', accessId: 'other-id', secureKey: 'other-key' } as const;

export interface Identity {
  organizationId: string;
  accessId: string;
  secureKey: string;
}

export interface ApiCallOptions {
  method?: string;
  as?: Identity | null;
  body?: unknown;
  rawBody?: string | Buffer | Uint8Array;
  headers?: Record<string, string>;
}

export interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export function baseUrl(): string {
  return inject('baseUrl');
}

export function authHeaders(identity: Identity): Record<string, string> {
  return {
    Authorization: `Basic ${Buffer.from(`${identity.accessId}:${identity.secureKey}`).toString('base64')}`,
    'X-Service-Auth-Organization-Id': identity.organizationId,
  };
}

/** One request to the local runtime, authenticated as the merchant unless told otherwise. */
export async function call<T = Record<string, unknown>>(path: string, options: ApiCallOptions = {}): Promise<ApiAnswer<T>> {
  const identity = options.as === undefined ? MERCHANT : options.as;
  const headers: Record<string, string> = { Accept: 'application/json', ...(identity ? authHeaders(identity) : {}) };
  let body: RequestInit["body"];
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  } else if (options.rawBody !== undefined) {
    body = options.rawBody as RequestInit["body"];
  }
  const response = await fetch(`${baseUrl()}${path}`, { method: options.method ?? 'GET', headers: { ...headers, ...options.headers }, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Applies the running runtime's environment so in-process code reaches the same stores. */
export function useRuntimeEnvironment(): Record<string, string> {
  const environment = inject('runtimeEnvironment');
  Object.assign(process.env, environment);
  return environment;
}
