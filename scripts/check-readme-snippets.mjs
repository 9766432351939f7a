// Type-checks every ```ts block of the package's README (libs/job-queue/README.md) against the
// package's built declarations (libs/job-queue/dist, built first), so the guide cannot drift from
// the API. `npm run compat` later compiles the same blocks against the packed tarball. A block preceded by `<!-- file: name.ts -->` is written under that name (blocks
// import each other); others get block-N.ts. Part of `npm run lint`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
execFileSync('npm', ['run', '--silent', 'build:lib'], { cwd: root, stdio: 'inherit' });
const dir = join(root, '.data', 'readme-snippets');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const readme = readFileSync(join(root, 'libs', 'job-queue', 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/(?:<!-- file: ([\w.-]+) -->\n)?```ts\n([\s\S]*?)```/g)];
if (blocks.length === 0) throw new Error('libs/job-queue/README.md has no ```ts blocks to check');
// Two blocks of one name would overwrite each other here and in the compat apps.
const names = blocks.flatMap(([, name]) => (name ? [name] : []));
const twice = names.filter((name, i) => names.indexOf(name) !== i);
if (twice.length > 0) throw new Error(`libs/job-queue/README.md names two blocks ${twice.join(', ')}`);
blocks.forEach(([, name, code], i) => writeFileSync(join(dir, name ?? `block-${i + 1}.ts`), code));
writeFileSync(
  join(dir, 'tsconfig.json'),
  JSON.stringify({
    extends: '../../tsconfig.json',
    // As `nest new` sets it up (nodenext, isolatedModules, decorator metadata): some errors, such
    // as a type-only import in a decorated signature (TS1272), show only under these settings.
    compilerOptions: {
      noEmit: true,
      types: ['node'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      isolatedModules: true,
      // The package as users get it: its .d.ts, not its sources.
      paths: {
        'nest-pg-job-queue': ['libs/job-queue/dist/index.d.ts'],
        'nest-pg-job-queue/testing': ['libs/job-queue/dist/testing/index.d.ts'],
        'nest-pg-job-queue/terminus': ['libs/job-queue/dist/terminus/index.d.ts'],
        'nest-pg-job-queue/prometheus': ['libs/job-queue/dist/prometheus/index.d.ts'],
        'nest-pg-job-queue/opentelemetry': ['libs/job-queue/dist/opentelemetry/index.d.ts'],
        'nest-pg-job-queue/dashboard': ['libs/job-queue/dist/dashboard/index.d.ts'],
      },
    },
    include: ['*.ts'],
  }),
);
execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', dir], { stdio: 'inherit' });
console.log(`README: ${blocks.length} TypeScript blocks type-check`);
