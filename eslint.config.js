import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.local/', 'coverage/', 'test-output/', 'client/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // Configuration is read in one place (shared/runtime/config.ts), per function container, so that a
    // handler sees exactly its function's variables locally as in AWS. Layer rules: .dependency-cruiser.cjs.
    files: ['functions/**/*.ts', 'shared/**/*.ts'],
    ignores: ['shared/runtime/container.ts', 'shared/log/**', 'shared/observability/**'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through #shared/runtime/config.ts.' }],
    },
  },
  {
    // Every AWS client a function uses gets the same budget, deadline, logging and tracing.
    files: ['functions/**/*.ts', 'shared/**/*.ts'],
    ignores: ['shared/aws/client-config.ts'],
    rules: {
      'no-restricted-syntax': ['error', { selector: 'NewExpression[callee.name=/Client$/]', message: 'Build AWS clients with awsClient (#shared/aws/client-config.ts).' }],
    },
  },
);
