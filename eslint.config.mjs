// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { layerZones } from './libs/job-queue/import-layers.mjs';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      'node_modules/**',
      'coverage/**',
      '.data/**',
      'bench/node_modules/**',
      // Code that breaks the import rules on purpose: scripts/check-import-rules.mjs lints it.
      'libs/job-queue/lint-fixtures/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The library's imports run one way: no cycle between files, no folder importing one above
    // it (libs/job-queue/ARCHITECTURE.md). The migrations keep their own imports.
    files: ['libs/job-queue/src/**/*.ts', 'libs/job-queue/lint-fixtures/**/*.ts'],
    ignores: ['libs/job-queue/src/migrations/**'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [importX.createNodeResolver({ extensions: ['.ts'] })],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts'],
    },
    rules: {
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { zones: layerZones('libs/job-queue/src') }],
    },
  },
);
