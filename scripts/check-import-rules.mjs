// Fails unless the import rules of eslint.config.mjs still reject what they are there to reject,
// so that neither can stop working unnoticed (a resolver that no longer finds .ts files makes
// both rules pass everything). Part of `npm run lint`.
//  - libs/job-queue/lint-fixtures/cycle: two files importing each other (`import-x/no-cycle`).
//  - a file of sql/ importing worker/, linted as text at that path (`no-restricted-paths`).
import { ESLint } from 'eslint';

const root = new URL('..', import.meta.url).pathname;
const eslint = new ESLint({ cwd: root, ignore: false });
let failed = false;

async function expectRule(rule, results, what) {
  const found = results.flatMap((result) => result.messages).filter((m) => m.ruleId === rule);
  if (found.length === 0) {
    failed = true;
    console.error(`check-import-rules: ${rule} no longer reports ${what}`);
  } else {
    console.log(`check-import-rules: ${rule} rejects ${what} (${found.length} report(s))`);
  }
}

await expectRule(
  'import-x/no-cycle',
  await eslint.lintFiles(['libs/job-queue/lint-fixtures/cycle/*.ts']),
  'the cycle in libs/job-queue/lint-fixtures/cycle',
);
await expectRule(
  'import-x/no-restricted-paths',
  await eslint.lintText(
    "import { JobWorker } from '../worker/job-worker';\nexport { JobWorker };\n",
    {
      filePath: 'libs/job-queue/src/sql/lint-fixture-upward-import.ts',
    },
  ),
  'an import from sql/ up into worker/',
);
if (failed) process.exit(1);
