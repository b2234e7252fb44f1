import type { SuccessDescription } from './envelope.ts';
import { responseMember } from './envelope.ts';

export interface ApiResponse {
  statusCode: number;
  headers?: Record<string, string>;
  /** Serialized as JSON; omitted for bodiless answers such as redirects. */
  body?: unknown;
  /** A non-JSON body sent as is (static assets); the headers name its Content-Type. */
  text?: string;
}

type Links = Record<string, string> & { self: string };

/** A single record in the success envelope: its members, then `response` and `links`. */
export function recordResponse(
  statusCode: 200 | 201,
  description: SuccessDescription,
  record: Record<string, unknown>,
  links: Links,
): ApiResponse {
  return {
    statusCode,
    headers: statusCode === 201 ? { Location: links.self } : {},
    body: { ...record, response: responseMember(description), links },
  };
}

export const created = (record: Record<string, unknown>, links: Links) => recordResponse(201, 'Create Successful.', record, links);
export const fetched = (record: Record<string, unknown>, links: Links) => recordResponse(200, 'Get Successful.', record, links);
export const updated = (record: Record<string, unknown>, links: Links) => recordResponse(200, 'Update Successful.', record, links);

export function deleted(record: Record<string, unknown>): ApiResponse {
  return { statusCode: 200, body: { ...record, response: responseMember('Delete Successful.') } };
}

export function redirect(location: string): ApiResponse {
  return { statusCode: 302, headers: { Location: location, 'Cache-Control': 'no-store' } };
}

/** 202: accepted, done after the answer (a webhook ping, a recovery). */
export function accepted(record: Record<string, unknown>, links: Links): ApiResponse {
  return { statusCode: 202, body: { ...record, response: responseMember('Request Accepted.'), links } };
}
