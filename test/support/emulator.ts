import path from 'node:path';
import type { ApiGatewayEmulatorOptions } from '../../local/api-gateway.ts';
import { fixtureRoutes } from '../fixtures/routes.ts';

/** The API Gateway emulator over the fixture routes and functions (test/fixtures), on a random loopback port. */
export function fixtureEmulatorOptions(overrides: Partial<ApiGatewayEmulatorOptions> = {}): ApiGatewayEmulatorOptions {
  return {
    routes: Object.values(fixtureRoutes),
    functionsDir: path.resolve(import.meta.dirname, '../fixtures/functions'),
    port: 0,
    host: '127.0.0.1',
    stage: 'local',
    binaryMediaTypes: ['multipart/form-data'],
    authorizerHandler: 'authorizer',
    authorizerCacheTtlSeconds: 0,
    ...overrides,
  };
}
