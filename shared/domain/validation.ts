import type { core } from 'zod/mini';
import type { FieldIssue } from './errors.ts';

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
