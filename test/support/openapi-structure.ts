/**
 * A structural check of an OpenAPI 3.1 document: the members the specification
 * requires, the shapes of paths, operations, parameters and responses, and
 * that every $ref and security requirement resolves. Returns the problems
 * found, as readable strings (empty when there are none). Not a full
 * validator: schema objects are checked only for resolvable $refs.
 */

type Json = Record<string, unknown>;

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const PATH_ITEM_MEMBERS = new Set([...HTTP_METHODS, '$ref', 'summary', 'description', 'servers', 'parameters']);
const PARAMETER_LOCATIONS = new Set(['query', 'header', 'path', 'cookie']);
const COMPONENT_KINDS = new Set(['schemas', 'responses', 'parameters', 'examples', 'requestBodies', 'headers', 'securitySchemes', 'links', 'callbacks', 'pathItems']);
const COMPONENT_NAME = /^[a-zA-Z0-9._-]+$/;
const STATUS_KEY = /^([1-5][0-9][0-9]|[1-5]XX|default)$/;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function openApiProblems(document: unknown): string[] {
  const problems: string[] = [];
  const fail = (where: string, message: string) => problems.push(`${where}: ${message}`);
  if (!isObject(document)) return ['the document is not an object'];

  if (typeof document.openapi !== 'string' || !/^3\.1\.\d+$/.test(document.openapi)) fail('openapi', 'must be a 3.1.x version string');
  const info = document.info;
  if (!isObject(info)) fail('info', 'is required');
  else {
    if (typeof info.title !== 'string' || info.title === '') fail('info.title', 'is required');
    if (typeof info.version !== 'string' || info.version === '') fail('info.version', 'is required');
  }
  if (!isObject(document.paths) && !isObject(document.webhooks) && !isObject(document.components)) fail('(root)', 'needs paths, webhooks or components');

  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#/')) return undefined;
    return ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), document);
  };
  const deref = (value: unknown): unknown => (isObject(value) && typeof value.$ref === 'string' ? resolve(value.$ref) : value);

  // Every $ref anywhere resolves inside the document.
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) node.forEach((item, index) => walk(item, `${where}[${index}]`));
    else if (isObject(node)) {
      if (typeof node.$ref === 'string' && resolve(node.$ref) === undefined) fail(where, `$ref ${node.$ref} does not resolve`);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`);
    }
  };
  walk(document, '#');

  const servers = document.servers;
  if (servers !== undefined) {
    if (!Array.isArray(servers)) fail('servers', 'must be an array');
    else
      servers.forEach((server: unknown, index) => {
        if (!isObject(server) || typeof server.url !== 'string') return fail(`servers[${index}]`, 'needs a url');
        const variables = isObject(server.variables) ? server.variables : {};
        for (const [, name] of server.url.matchAll(/\{([^}]+)\}/g)) {
          const variable = variables[name as string];
          if (!isObject(variable) || typeof variable.default !== 'string') fail(`servers[${index}]`, `variable ${name} needs a default`);
        }
      });
  }

  const components = isObject(document.components) ? document.components : {};
  for (const [kind, entries] of Object.entries(components)) {
    if (!COMPONENT_KINDS.has(kind)) fail(`components.${kind}`, 'is not a component kind');
    else if (!isObject(entries)) fail(`components.${kind}`, 'must be an object');
    else for (const name of Object.keys(entries)) if (!COMPONENT_NAME.test(name)) fail(`components.${kind}.${name}`, 'is not a valid component name');
  }
  const securitySchemes = isObject(components.securitySchemes) ? components.securitySchemes : {};
  for (const [name, scheme] of Object.entries(securitySchemes)) {
    if (!isObject(scheme) || !['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect'].includes(scheme.type as string)) fail(`securitySchemes.${name}`, 'has no valid type');
    else if (scheme.type === 'http' && typeof scheme.scheme !== 'string') fail(`securitySchemes.${name}`, 'http needs scheme');
    else if (scheme.type === 'apiKey' && (typeof scheme.name !== 'string' || !['query', 'header', 'cookie'].includes(scheme.in as string))) {
      fail(`securitySchemes.${name}`, 'apiKey needs name and in');
    }
  }
  const checkSecurity = (security: unknown, where: string) => {
    if (security === undefined) return;
    if (!Array.isArray(security)) return fail(where, 'security must be an array');
    for (const requirement of security) {
      if (!isObject(requirement)) fail(where, 'a security requirement must be an object');
      else for (const name of Object.keys(requirement)) if (!Object.hasOwn(securitySchemes, name)) fail(where, `security scheme ${name} is not declared`);
    }
  };
  checkSecurity(document.security, 'security');

  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!path.startsWith('/')) fail(path, 'a path must start with /');
    if (!isObject(item)) {
      fail(path, 'a path item must be an object');
      continue;
    }
    for (const key of Object.keys(item)) if (!PATH_ITEM_MEMBERS.has(key) && !key.startsWith('x-')) fail(path, `unexpected member ${key}`);
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
    const pathLevel = Array.isArray(item.parameters) ? item.parameters.map(deref) : [];
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (!isObject(operation)) {
        fail(where, 'an operation must be an object');
        continue;
      }
      if (typeof operation.operationId === 'string') {
        if (operationIds.has(operation.operationId)) fail(where, `operationId ${operation.operationId} is not unique`);
        operationIds.add(operation.operationId);
      }
      checkSecurity(operation.security, where);

      const parameters = [...pathLevel, ...(Array.isArray(operation.parameters) ? operation.parameters.map(deref) : [])];
      const seen = new Set<string>();
      for (const parameter of parameters) {
        if (!isObject(parameter) || typeof parameter.name !== 'string' || !PARAMETER_LOCATIONS.has(parameter.in as string)) {
          fail(where, `a parameter needs a name and a valid in: ${JSON.stringify(parameter)}`);
          continue;
        }
        const key = `${parameter.in}:${parameter.name}`;
        if (seen.has(key)) fail(where, `parameter ${key} is declared twice`);
        seen.add(key);
        if ((parameter.schema === undefined) === (parameter.content === undefined)) fail(where, `parameter ${key} needs exactly one of schema or content`);
        if (parameter.in === 'path') {
          if (parameter.required !== true) fail(where, `path parameter ${parameter.name} must be required`);
          if (!templated.includes(parameter.name)) fail(where, `path parameter ${parameter.name} is not in the path`);
        }
      }
      for (const name of templated) if (!seen.has(`path:${name}`)) fail(where, `path parameter ${name} is not declared`);

      if (operation.requestBody !== undefined) {
        const body = deref(operation.requestBody);
        if (!isObject(body) || !isObject(body.content) || Object.keys(body.content).length === 0) fail(where, 'requestBody needs content');
      }
      const responses = operation.responses;
      if (!isObject(responses) || Object.keys(responses).length === 0) {
        fail(where, 'responses must hold at least one response');
        continue;
      }
      for (const [status, response] of Object.entries(responses)) {
        if (!STATUS_KEY.test(status)) fail(where, `response key ${status} is not a status code`);
        const resolved = deref(response);
        if (!isObject(resolved) || typeof resolved.description !== 'string') fail(`${where} ${status}`, 'a response needs a description');
        else if (resolved.content !== undefined) {
          for (const [mediaType, media] of Object.entries(isObject(resolved.content) ? resolved.content : {})) {
            if (!isObject(media)) fail(`${where} ${status}`, `${mediaType} must be a media type object`);
          }
        }
      }
    }
  }
  return problems;
}
