import * as z from 'zod/mini';
import type { core } from 'zod/mini';
import type { FieldIssue } from './errors.ts';

/**
 * The request schemas (paymethods, one-time tokens, documents) parse a body in
 * one pass and report every failing field at once: member rules are the
 * members' schemas, rules across members are refinements that run even when a
 * member failed.
 */
export const ALWAYS = { when: () => true } as const;

export type RefinementCtx = core.$RefinementCtx;

/** True when the member (or something inside it) already failed: derived checks stay quiet. */
export function failed(ctx: RefinementCtx, member: string): boolean {
  return ctx.issues.some((issue) => issue.path?.[0] === member);
}

/**
 * A rule across an object's members. It runs even when a member failed (so
 * one answer names every problem), but not when the value is no object at
 * all: "must be an object" says it all, and a string has no members to call missing.
 */
export function acrossMembers<T extends object>(rule: (value: T, ctx: RefinementCtx) => void) {
  return z.superRefine((value: T, ctx: RefinementCtx) => {
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) rule(value, ctx);
  }, ALWAYS);
}

/** Every issue of the input, and the parsed value when there is none. */
export type Parsed<T> = { value: T; issues: [] } | { value: undefined; issues: FieldIssue[] };

export function parseWith<Schema extends z.ZodMiniType>(schema: Schema, input: unknown): Parsed<z.output<Schema>> {
  const result = schema.safeParse(input);
  return result.success ? { value: result.data, issues: [] } : { value: undefined, issues: issuesFromZod(result.error) };
}

/**
 * zod issues -> the contract's field issues: dotted paths (`card.account_number`),
 * one issue per unknown member (named, so a typo is visible), every issue kept.
 */
export function issuesFromZod(error: core.$ZodError, basePath: readonly PropertyKey[] = []): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const issue of error.issues) {
    const path = [...basePath, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) issues.push({ field: dotted([...path, key]), message: 'is not a recognized member' });
    } else {
      issues.push({ field: dotted(path), message: issue.message });
    }
  }
  return issues;
}

export function dotted(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

/** Collects issues from several checks so a request learns about every failing field at once. */
export class IssueList {
  readonly items: FieldIssue[] = [];

  add(field: string, message: string): void {
    this.items.push({ field, message });
  }

  addAll(issues: readonly FieldIssue[]): void {
    this.items.push(...issues);
  }

  /** True when a field (or something inside it) already failed, so derived checks stay quiet. */
  has(field: string): boolean {
    return this.items.some((issue) => issue.field === field || issue.field.startsWith(`${field}.`));
  }

  get empty(): boolean {
    return this.items.length === 0;
  }
}
