/**
 * `npm run fuzz`: the randomized model test, long form (see "The randomized model test" in the
 * repository README).
 *
 *   npm run fuzz -- --minutes=15 --seed=3       one seed's operations for 15 minutes
 *   npm run fuzz -- --minutes=60                seeds 1, 2, 3 … (300 steps each) for an hour
 *   npm run fuzz -- --seed=3 --steps=140        replay: the same 140 operations of seed 3
 *   npm run fuzz -- --ci                        CI's fixed seeds (CI_SEEDS), CI_STEPS operations each
 *   --processes=P (default 3)  --quiesce-every=N (default 60)  --keep-going (past a violation)
 *   --until-found=A,B  end a seed's run once each named known defect or invariant was found
 *   --weights=deploy:20,kill:0  other weights for some operations (operations.ts: DEFAULT_WEIGHTS)
 *   --keep-db          leave each seed's database behind, to read after a failure
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
import type { OperationKind } from './fuzz-types';
import { KNOWN_DEFECTS } from './invariants';
import { DEFAULT_WEIGHTS } from './operations';

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

function weightsFlag(): Partial<Record<OperationKind, number>> | undefined {
  const text = flag('weights');
  if (text === undefined) return undefined;
  const weights: Partial<Record<OperationKind, number>> = {};
  for (const pair of text.split(',')) {
    const [kind, value] = pair.split(':');
    if (!(kind in DEFAULT_WEIGHTS) || !Number.isInteger(Number(value))) {
      throw new Error(
        `--weights: ${pair} is not <operation>:<integer> (${Object.keys(DEFAULT_WEIGHTS).join(', ')})`,
      );
    }
    weights[kind as OperationKind] = Number(value);
  }
  return weights;
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

/** CI's seeds, run on each database CI tests on (`.ci/run`); each found nothing new when chosen. */
export const CI_SEEDS = [1, 2];
export const CI_STEPS = 120;

async function mainCi(): Promise<number> {
  const server = await startTestPostgres();
  console.log(`PostgreSQL: ${server.source}`);
  const started = Date.now();
  let failed = 0;
  let operations = 0;
  let checks = 0;
  try {
    for (const seed of CI_SEEDS) {
      const report = await runFuzz({
        serverUrl: server.url,
        seed,
        steps: CI_STEPS,
        log: (line) => console.log(line),
      });
      console.log(describeReport(report));
      operations += report.steps;
      checks += Object.values(report.checks).reduce((sum, n) => sum + n, 0);
      if (report.violations.some((v) => !v.knownDefect)) {
        failed++;
        console.log(`  replay: npm run fuzz -- --seed=${seed} --steps=${report.steps}`);
        console.log(
          `  operation log:\n${report.operationLog.map((e) => `    ${e.step} ${JSON.stringify(e.operation)} => ${e.result}`).join('\n')}`,
        );
      }
    }
  } finally {
    await server.stop();
  }
  console.log(
    `fuzz: ${CI_SEEDS.length} seeds, ${operations} operations, ${checks} invariant checks, ` +
      `${failed} seed(s) with a new violation, ${Math.round((Date.now() - started) / 1000)} s`,
  );
  return failed > 0 ? 1 : 0;
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
        weights: weightsFlag(),
        keepDatabase: process.argv.includes('--keep-db'),
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
      // One seed when it was named or when no time was given; else the next, until time is up.
      if (seedFlag !== undefined || until === undefined) break;
      if (failed && !keepGoing) break;
    }
  } finally {
    await server.stop();
  }
  console.log(`seeds tried: ${tried.join(', ')}`);
  return failed ? 1 : 0;
}

(process.argv.includes('--ci') ? mainCi() : mainLong()).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error((error as Error)?.stack ?? error);
    process.exit(2);
  },
);
