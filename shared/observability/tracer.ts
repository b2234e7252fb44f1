import { Tracer } from '@aws-lambda-powertools/tracer';
import { SERVICE_NAME } from './catalog.ts';

/**
 * One X-Ray tracer per function. It records nothing outside Lambda (Powertools
 * checks AWS_EXECUTION_ENV) and nothing when POWERTOOLS_TRACE_ENABLED=false,
 * which the local runtime sets: handler code is the same in both places.
 * Responses are never attached to traces (see api-handler.ts): they are tenant data.
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? SERVICE_NAME });
