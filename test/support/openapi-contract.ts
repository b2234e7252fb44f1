/**
 * Checks real answers against the OpenAPI document: the operation (method and
 * path template, or the path's ANY method for a 405) must declare the status;
 * every required header must be there and every declared header must match its
 * schema; the body must match the declared media type and schema (JSON Schema
 * 2020-12 with formats, through Ajv). Answer schemas are closed, so a member
 * the document does not name is a mismatch.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ANY_METHOD = 'x-amazon-apigateway-any-method';
const DOCUMENT_ID = 'urn:payments:openapi';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface ObservedAnswer {
  method: string;
  /** The URL's path, e.g. /v3/organizations/org_1/documents. */
  path: string;
  status: number;
  headers: Headers;
  /** The body as received (empty string for none). */
  text: string;
}

export interface ContractCheck {
  /** `GET /v3/organizations/{organization_id}/documents`, or undefined when no documented path matches. */
  operation: string | undefined;
  mismatches: string[];
}

const escapePointer = (part: string) => part.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiContract {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; pattern: RegExp }>;

  constructor(private readonly document: Json) {
    // Formats the document uses that are about transport, not JSON values.
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    // Literal segments win over parameters, as in API Gateway (documents/uploads is not documents/{document_id}).
    const parameters = (template: string) => template.split('{').length;
    this.templates = Object.keys(document.paths as Json)
      .sort((a, b) => parameters(a) - parameters(b))
      .map((template) => ({
        template,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`),
      }));
  }

  static fromFile(url: URL): OpenApiContract {
    return new OpenApiContract(JSON.parse(readFileSync(url, 'utf8')) as Json);
  }

  /** The documented operations, as `METHOD template`, each with the statuses it declares. */
  declared(): Map<string, string[]> {
    const result = new Map<string, string[]>();
    for (const [template, item] of Object.entries(this.document.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = method === ANY_METHOD ? `ANY ${template}` : HTTP_METHODS.includes(method) ? `${method.toUpperCase()} ${template}` : undefined;
        if (name) result.set(name, Object.keys((operation as { responses: Json }).responses));
      }
    }
    return result;
  }

  check(answer: ObservedAnswer): ContractCheck {
    const template = this.templates.find((candidate) => candidate.pattern.test(answer.path))?.template;
    if (!template) return { operation: undefined, mismatches: [] };
    const item = (this.document.paths as Record<string, Json>)[template] as Json;
    const method = answer.method.toLowerCase();
    const declaredMethod = Object.hasOwn(item, method) && HTTP_METHODS.includes(method) ? method : ANY_METHOD;
    const operation = `${declaredMethod === ANY_METHOD ? 'ANY' : answer.method.toUpperCase()} ${template}`;
    const responsesPointer = `/paths/${escapePointer(template)}/${escapePointer(declaredMethod)}/responses`;
    const responses = (item[declaredMethod] as { responses: Json }).responses;
    const mismatches: string[] = [];
    const fail = (message: string) => mismatches.push(`${answer.method} ${answer.path} -> ${answer.status} (${operation}): ${message}`);
    const declared = responses[String(answer.status)] as Json | undefined;
    if (!declared) {
      fail(`status ${answer.status} is not declared (declared: ${Object.keys(responses).join(', ')}); body ${answer.text.slice(0, 300)}`);
      return { operation, mismatches };
    }
    const [response, pointer] = this.resolve(declared, `${responsesPointer}/${answer.status}`);

    for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
      const [resolved, headerPointer] = this.resolve(header as Json, `${pointer}/headers/${escapePointer(name)}`);
      const value = answer.headers.get(name);
      if (value === null) {
        if (resolved.required === true) fail(`required header ${name} is missing`);
        continue;
      }
      const errors = this.validate(`${headerPointer}/schema`, value);
      if (errors) fail(`header ${name}: ${JSON.stringify(value)} ${errors}`);
    }

    const content = response.content as Record<string, Json> | undefined;
    if (!content) {
      if (answer.text !== '') fail(`a body is not declared, got ${answer.text.slice(0, 200)}`);
      return { operation, mismatches };
    }
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (!Object.hasOwn(content, mediaType)) {
      fail(`Content-Type ${JSON.stringify(mediaType)} is not declared (declared: ${Object.keys(content).join(', ')})`);
      return { operation, mismatches };
    }
    let body: unknown = answer.text;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(answer.text);
      } catch {
        fail(`the body is not JSON: ${answer.text.slice(0, 200)}`);
        return { operation, mismatches };
      }
    }
    const errors = this.validate(`${pointer}/content/${escapePointer(mediaType)}/schema`, body);
    if (errors) fail(`body ${errors}; body ${answer.text.slice(0, 500)}`);
    return { operation, mismatches };
  }

  /** A response or header object with its $ref followed, and the pointer of what it resolved to. */
  private resolve(node: Json, pointer: string): [Json, string] {
    if (typeof node.$ref !== 'string') return [node, pointer];
    const target = node.$ref.slice(1);
    const resolved = target
      .split('/')
      .slice(1)
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((at, part) => (at as Json)[part], this.document) as Json;
    return [resolved, target];
  }

  /** Undefined when `value` matches the schema at `pointer`, else the errors. */
  private validate(pointer: string, value: unknown): string | undefined {
    let validator = this.validators.get(pointer);
    if (!validator) {
      validator = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(pointer, validator);
    }
    if (validator(value)) return undefined;
    return this.ajv.errorsText(validator.errors, { dataVar: 'value' });
  }
}
