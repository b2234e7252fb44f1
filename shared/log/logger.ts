import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { redactingReplacer } from './redact.ts';

/**
 * One structured JSON logger per function: one JSON object per line on
 * stdout (warnings and errors on stderr), which CloudWatch Logs Insights reads
 * as fields. Events are never logged whole: they carry card data. Redaction
 * runs on every member of every line.
 *
 * The fields are Powertools Logger's (level, message, timestamp, service,
 * cold_start, function_*, xray_trace_id), so queries written for them keep
 * working; this is the part of it the service uses, without its ~50 KiB in
 * every bundle. LOG_LEVEL and POWERTOOLS_SERVICE_NAME are read as it reads them.
 */
const LEVELS = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, CRITICAL: 50, SILENT: 60 } as const;
type LevelName = keyof typeof LEVELS;

export type LogAttributes = Record<string, unknown>;

export class Logger {
  private keys: LogAttributes = {};
  private lambda: LogAttributes = {};
  private coldStart = true;

  debug(message: string, attributes?: LogAttributes): void {
    this.write('DEBUG', message, attributes);
  }

  info(message: string, attributes?: LogAttributes): void {
    this.write('INFO', message, attributes);
  }

  warn(message: string, attributes?: LogAttributes): void {
    this.write('WARN', message, attributes);
  }

  error(message: string, attributes?: LogAttributes): void {
    this.write('ERROR', message, attributes);
  }

  /** Keys added to every later line, until `resetKeys` (each invocation starts with none). */
  appendKeys(keys: LogAttributes): void {
    Object.assign(this.keys, keys);
  }

  resetKeys(): void {
    this.keys = {};
  }

  /** The invocation's Lambda context, on every line it logs. */
  addContext(context: Context): void {
    this.lambda = {
      cold_start: this.coldStart,
      function_arn: context.invokedFunctionArn,
      function_memory_size: Number(context.memoryLimitInMB) || undefined,
      function_name: context.functionName,
      function_request_id: context.awsRequestId,
    };
    this.coldStart = false;
  }

  private write(level: LevelName, message: string, attributes: LogAttributes | undefined): void {
    if (LEVELS[level] < threshold()) return;
    const line = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: process.env.POWERTOOLS_SERVICE_NAME ?? 'payments-api',
      ...this.lambda,
      ...(process.env._X_AMZN_TRACE_ID ? { xray_trace_id: /Root=([^;]+)/.exec(process.env._X_AMZN_TRACE_ID)?.[1] } : {}),
      ...this.keys,
      ...attributes,
    };
    const text = `${JSON.stringify(line, logReplacer)}\n`;
    if (LEVELS[level] >= LEVELS.WARN) process.stderr.write(text);
    else process.stdout.write(text);
  }
}

function threshold(): number {
  const configured = (process.env.LOG_LEVEL ?? 'INFO').toUpperCase();
  return configured in LEVELS ? LEVELS[configured as LevelName] : LEVELS.INFO;
}

/** Errors as their name, message, stack and cause (JSON.stringify would give `{}`), then redaction. */
function logReplacer(key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const { name, message, stack, cause } = value;
    const code = (value as { code?: unknown }).code;
    return redactingReplacer(key, { name, message, stack, ...(code !== undefined ? { code } : {}), ...(cause !== undefined ? { cause } : {}) });
  }
  return redactingReplacer(key, value);
}

export const logger = new Logger();

/** Middleware: each invocation logs with its own Lambda context and none of the previous one's keys. */
export function injectLambdaContext(target: Logger, options: { resetKeys?: boolean } = {}): MiddlewareObj {
  return {
    before: (request) => {
      if (options.resetKeys) target.resetKeys();
      target.addContext(request.context);
    },
  };
}
