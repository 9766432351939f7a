// Writes the ```ts blocks of the package README into a scratch app's src/, as a user would copy
// them: a block preceded by `<!-- file: name.ts -->` under that name, others as block-N.ts (the same
// rule as scripts/check-readme-snippets.mjs). With --esm, relative import specifiers get the `.js`
// suffix that ESM needs (`from './x'` -> `from './x.js'`), which the README tells ESM users to add;
// nothing else changes, so line numbers stay the README's.
// With --without-peers, blocks that import an entry point of an optional peer (`/terminus`,
// `/prometheus`, `/opentelemetry`) or an optional peer itself (`nestjs-cls`,
// `@nestjs-cls/*`, `class-transformer`, `class-validator`) are left out: the app without those
// peers.
//   node extract-readme.mjs README.md OUT_DIR [--esm] [--without-peers]   write the blocks
//   node extract-readme.mjs README.md --locate          read tsc output on stdin, add README lines
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [readmePath, outDir, ...flags] = process.argv.slice(2);
const FLAGS = ['--esm', '--without-peers'];
if (!readmePath || !outDir || flags.some((flag) => !FLAGS.includes(flag))) {
  console.error(
    'usage: node extract-readme.mjs README.md (OUT_DIR [--esm] [--without-peers] | --locate)',
  );
  process.exit(2);
}
const PEER_ENTRY_POINT =
  /from ['"](nest-pg-job-queue\/(terminus|prometheus|opentelemetry)|@nestjs-cls\/[a-z-]+|nestjs-cls|class-transformer|class-validator)['"]/;

const readme = readFileSync(readmePath, 'utf8');
const blocks = [...readme.matchAll(/(<!-- file: ([\w.-]+) -->\n)?```ts\n([\s\S]*?)```/g)].map(
  (match, i) => ({
    file: match[2] ?? `block-${i + 1}.ts`,
    code: match[3],
    // README line of the block's first code line (1-based).
    firstLine: readme.slice(0, match.index + match[0].length - match[3].length - 3).split('\n')
      .length,
  }),
);
if (blocks.length === 0) throw new Error(`${readmePath} has no \`\`\`ts blocks`);

if (outDir === '--locate') {
  // `src/report.processor.ts(11,48): error ...` -> `... [README.md:92]`
  const lines = readFileSync(0, 'utf8').split('\n');
  for (const line of lines) {
    const hit = line.match(/^src\/([\w.-]+)\((\d+),\d+\)/);
    const block = hit && blocks.find((b) => b.file === hit[1]);
    console.log(block ? `${line} [README.md:${block.firstLine + Number(hit[2]) - 1}]` : line);
  }
  process.exit(0);
}

// `from './x'`, `import './x'`, `import('./x')`, `export ... from '../x'`: a relative specifier
// without an extension.
const relativeSpecifier = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.\.?\/[^'"]*?)\2/g;
const esm = flags.includes('--esm');
const withoutPeers = flags.includes('--without-peers');
let skipped = 0;
mkdirSync(outDir, { recursive: true });
const written = new Set();
let rewrites = 0;
for (const { file, code } of blocks) {
  if (written.has(file)) throw new Error(`README: two blocks are named ${file}`);
  if (withoutPeers && PEER_ENTRY_POINT.test(code)) {
    skipped += 1;
    continue;
  }
  let text = code;
  if (esm) {
    text = text.replace(relativeSpecifier, (whole, lead, quote, spec) => {
      if (/\.(c|m)?js$|\.json$/.test(spec)) return whole;
      rewrites += 1;
      return `${lead}${quote}${spec}.js${quote}`;
    });
  }
  writeFileSync(join(outDir, file), text);
  written.add(file);
}
console.log(
  `README: ${written.size} blocks -> src/ (${[...written].join(', ')})` +
    (esm ? `; ${rewrites} relative imports given .js` : '') +
    (withoutPeers ? `; ${skipped} blocks of the optional entry points left out` : ''),
);
