/**
 * `npm run fuzz`: the randomized model test, long form (see "The randomized model test" in the
 * repository README).
 *
 *   npm run fuzz -- --minutes=15 --seed=3       one seed's operations for 15 minutes
 *   npm run fuzz -- --minutes=60                seeds 1, 2, 3 … (300 steps each) for an hour
 *   npm run fuzz -- --seed=3 --steps=140        replay: the same 140 operations of seed 3
 *   --processes=P (default 3)  --quiesce-every=N (default 60)  --keep-going (past a violation)
 *   --until-found=A,B  end a seed's run once each named known defect or invariant was found
 *
 * The server: DATABASE_URL, else testcontainers, else an embedded PostgreSQL; each seed gets a
 * database of its own on it, dropped afterwards. Writes each failing seed's report, operation log
 * included, to .data/fuzz/seed-S.json. Exits 1 when a violation that is not a known defect was
 * found.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startTestPostgres } from '../support/postgres-server';
import { FuzzRunReport, runFuzz } from './driver';
import { KNOWN_DEFECTS } from './invariants';

function flag(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv.find((arg) => arg.startsWith(prefix))?.slice(prefix.length);
}
function intFlag(name: string): number | undefined {
  const text = flag(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name}: ${text} is not a number`);
  return value;
}

export function describeReport(report: FuzzRunReport): string {
  const lines = [
    `seed ${report.seed}: ${report.steps} operations in ${report.seconds.toFixed(1)} s ` +
      `(${(report.steps / report.seconds).toFixed(2)} a second)`,
    `  operations: ${Object.entries(report.operations)
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
    `  invariants checked: ${Object.entries(report.checks)
      .sort()
      .map(([k, n]) => `${k} ×${n}`)
      .join(', ')}`,
  ];
  for (const [what, seconds] of Object.entries(report.firstFound)) {
    lines.push(
      `  first found after ${seconds} s: ${KNOWN_DEFECTS[what] ? `known defect ${what}` : what}`,
    );
  }
  const shown = new Set<string>();
  for (const v of report.violations) {
    const key = `${v.knownDefect ?? ''}${v.invariant}${v.message}`;
    if (shown.has(key) || shown.size >= 30) continue;
    shown.add(key);
    lines.push(
      `  ${v.knownDefect ? `known (${v.knownDefect})` : 'VIOLATION'} at step ${v.step} [${v.invariant}]: ${v.message}`,
    );
  }
  return lines.join('\n');
}

async function mainLong(): Promise<number> {
  const minutes = intFlag('minutes');
  const seedFlag = intFlag('seed');
  const steps = intFlag('steps');
  const processes = intFlag('processes') ?? 3;
  const quiesceEvery = intFlag('quiesce-every');
  const keepGoing = process.argv.includes('--keep-going');
  if (minutes === undefined && steps === undefined)
    throw new Error('give --minutes=N or --steps=N (and --seed=S to replay one)');
  const until = minutes === undefined ? undefined : Date.now() + minutes * 60_000;
  const server = await startTestPostgres();
  console.log(`PostgreSQL: ${server.source}`);
  const outDir = resolve(__dirname, '..', '..', '.data', 'fuzz');
  let failed = false;
  const tried: number[] = [];
  try {
    for (let seed = seedFlag ?? 1; until === undefined || Date.now() < until; seed++) {
      tried.push(seed);
      console.log(`seed ${seed}: starting`);
      const report = await runFuzz({
        serverUrl: server.url,
        seed,
        steps: steps ?? (seedFlag !== undefined ? undefined : 300),
        untilMs: until,
        processes,
        quiesceEvery,
        stopAtFirst: !keepGoing,
        stopWhenFound: flag('until-found')?.split(','),
        log: (line) => console.log(line),
      });
      console.log(describeReport(report));
      const fresh = report.violations.filter((v) => !v.knownDefect);
      if (report.violations.length > 0) {
        mkdirSync(outDir, { recursive: true });
        const file = join(outDir, `seed-${seed}.json`);
        writeFileSync(file, JSON.stringify(report, null, 2));
        console.log(`  report and operation log: ${file}`);
        console.log(`  replay: npm run fuzz -- --seed=${seed} --steps=${report.steps}`);
      }
      if (fresh.length > 0) failed = true;
      if (seedFlag !== undefined || (steps !== undefined && seedFlag !== undefined)) break;
      if (failed && !keepGoing) break;
    }
  } finally {
    await server.stop();
  }
  console.log(`seeds tried: ${tried.join(', ')}`);
  return failed ? 1 : 0;
}

mainLong().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error)?.stack ?? error);
    process.exit(2);
  },
);
