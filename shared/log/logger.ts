import { Logger } from '@aws-lambda-powertools/logger';
import { redactingReplacer } from './redact.ts';

/**
 * One structured JSON logger per function. Events are never logged whole: they
 * carry card data. Redaction runs on every member of every line.
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payments-api',
  logLevel: (process.env.LOG_LEVEL as 'INFO' | undefined) ?? 'INFO',
  jsonReplacerFn: redactingReplacer,
});
