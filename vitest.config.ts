import { defineConfig } from 'vitest/config';

// The SDK's notice about older Node.js versions adds nothing to a test run.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.LOG_LEVEL ??= 'WARN';

// Two cores: integration files share one local runtime started once by the global setup.
export default defineConfig({
  test: {
    maxWorkers: 2,
    // CI asks for a JSON report to print its closing summary line.
    reporters: process.env.VITEST_JSON_REPORT ? ['default', 'json'] : ['default'],
    outputFile: process.env.VITEST_JSON_REPORT ? { json: process.env.VITEST_JSON_REPORT } : undefined,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/contract-coverage.ts', 'test/support/global-setup.ts'],
          // Every answer the suite receives is checked against docs/openapi.json.
          setupFiles: ['test/support/contract-recorder.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup-demo.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
