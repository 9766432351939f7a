import { InvalidJobInputError } from '../errors';
import { DependencyFailurePolicy } from '../interfaces/enqueue-options.interface';
import { FlowDefinition, FlowNode, FlowStep } from '../interfaces/flow.interface';
import { FlowEdge, FlowJobRow } from '../sql/insert-flow-jobs.query';
import { jobInput } from '../validation/input.validator';
import { checkJobId } from '../validation/job-input.checks';
import { BatchCaps, CheckedInsertRow, RetentionOf, toJobInsertRow } from './job-insert-rows';

/** Most dependencies one job may have (`dependsOn`, a step's, a node's children). */
export const MAX_DEPENDENCIES = 1_000;

/** The options of `enqueue` a job with `dependsOn` may not have: its insert has no unique key. */
const UNIQUENESS_KEYS = ['uniqueKey', 'uniqueStates', 'uniqueForMs', 'debounceMs', 'throttleMs'];

/** A flow's jobs and edges, checked, as `insertFlowJobs` takes them. */
export interface FlowGraph {
  jobs: FlowJobRow[];
  edges: FlowEdge[];
  /** The step names, in input order. */
  names: string[];
}

/** A step before its checks: the tree form is turned into these. */
interface RawStep {
  path: string;
  item: Record<string, unknown>;
  name: unknown;
  dependsOn: unknown;
  policy: unknown;
}

/**
 * A `flow()` definition checked and turned into its jobs and edges: every step's job options as
 * `enqueueMany` checks an item's, the names unique, each dependency a step of the flow, no
 * cycle, at most `maxBatchSize` steps and `maxBatchBytes` of data. Nothing is sent before all of
 * it is checked.
 */
export function toFlowGraph(
  definition: FlowDefinition,
  caps: BatchCaps,
  retentionOf: RetentionOf,
): FlowGraph {
  const raw = rawSteps(definition, caps.maxBatchSize);
  const index = new Map<string, number>();
  raw.forEach((step, i) => {
    const name = checkStepName(`${step.path}name`, step.name);
    if (index.has(name)) jobInput.fail(`${step.path}name`, name, 'a name no other step has');
    index.set(name, i);
  });
  const names = [...index.keys()];
  const dependsOn = raw.map((step) => stepDependencies(step, index));
  checkAcyclic(raw, dependsOn, names);
  const dependedOn = new Set(dependsOn.flat());
  let bytes = 0;
  const jobs = raw.map((step, i): FlowJobRow => {
    const row = flowJobRow(step.path, step.item, caps, retentionOf);
    bytes += row.dataBytes;
    if (bytes > caps.maxBatchBytes) {
      jobInput.fail(
        `${step.path}data`,
        `<more than ${caps.maxBatchBytes} bytes>`,
        `at most ${caps.maxBatchBytes} bytes of data in one flow (maxBatchBytes)`,
      );
    }
    const waits = dependsOn[i].length > 0;
    const policy = checkPolicy(`${step.path}onDependencyFailure`, step.policy);
    return {
      row,
      stepName: names[i],
      status: waits ? 'blocked' : null,
      unfinishedDependencies: dependsOn[i].length,
      onDependencyFailure: waits ? policy : null,
      hasDependants: dependedOn.has(i),
      lastError: null,
    };
  });
  const edges = dependsOn.flatMap((deps, i) => deps.map((dep) => ({ job: i + 1, step: dep + 1 })));
  return { jobs, edges, names };
}

/** The steps of either form, each with the path its errors name. */
function rawSteps(definition: FlowDefinition, maxSteps: number): RawStep[] {
  jobInput.plainObject('flow', definition);
  if ('steps' in definition) {
    jobInput.knownKeys(definition, ['steps']);
    const { steps } = definition;
    if (!Array.isArray(steps) || steps.length === 0) {
      jobInput.fail('steps', steps, 'a non-empty array of steps');
    }
    checkStepCount(steps.length, maxSteps);
    return steps.map((step: FlowStep, i) => {
      const path = `steps[${i}].`;
      const item = jobInput.plainObject(path.slice(0, -1), step) as Record<string, unknown>;
      const { name, dependsOn, onDependencyFailure, ...job } = item;
      return { path, item: job, name, dependsOn, policy: onDependencyFailure };
    });
  }
  // Each node before its children, in their order: a stack, not recursion, so that a chain of
  // `maxBatchSize` nodes cannot overflow the call stack.
  const steps: RawStep[] = [];
  const pending: Array<{ node: FlowNode; path: string; place: string }> = [
    { node: definition, path: '', place: 'root' },
  ];
  while (pending.length > 0) {
    const { node, path, place } = pending.pop()!;
    const item = jobInput.plainObject(path.slice(0, -1) || 'flow', node) as Record<string, unknown>;
    const { name, children, onDependencyFailure, ...job } = item;
    const stepName = name === undefined ? place : name;
    steps.push({ path, item: job, name: stepName, dependsOn: [], policy: onDependencyFailure });
    checkStepCount(steps.length, maxSteps);
    if (children === undefined) continue;
    if (!Array.isArray(children)) {
      jobInput.fail(`${path}children`, children, 'an array of flow nodes');
    }
    if (children.length > MAX_DEPENDENCIES) tooManyDependencies(`${path}children`, children.length);
    const named = children.map((child: FlowNode, i) => ({
      node: child,
      path: `${path}children[${i}].`,
      place: `${String(stepName)}.${i}`,
    }));
    steps[steps.length - 1].dependsOn = named.map(({ node: child, place: childPlace }) => {
      const childName = (child as { name?: unknown } | null)?.name;
      return childName === undefined ? childPlace : childName;
    });
    pending.push(...named.reverse());
  }
  return steps;
}

function checkStepCount(count: number, maxSteps: number): void {
  if (count > maxSteps) {
    throw new InvalidJobInputError(
      `Too many steps for one flow: more than ${maxSteps} (maxBatchSize).`,
      'steps',
      `<more than ${maxSteps} steps>`,
    );
  }
}

function checkStepName(field: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 255 || name.includes('\0')) {
    jobInput.fail(field, name, 'a step name of 1 to 255 characters');
  }
  return name;
}

/** A step's dependencies as step positions, each a step of the flow, listed once. */
function stepDependencies(step: RawStep, index: Map<string, number>): number[] {
  const field = `${step.path}dependsOn`;
  if (step.dependsOn === undefined) return [];
  if (!Array.isArray(step.dependsOn))
    jobInput.fail(field, step.dependsOn, 'an array of step names');
  if (step.dependsOn.length > MAX_DEPENDENCIES) tooManyDependencies(field, step.dependsOn.length);
  const seen = new Set<number>();
  return step.dependsOn.map((name: unknown, j) => {
    const position = typeof name === 'string' ? index.get(name) : undefined;
    if (position === undefined)
      jobInput.fail(`${field}[${j}]`, name, 'the name of a step of this flow');
    if (seen.has(position)) jobInput.fail(`${field}[${j}]`, name, 'a step listed once');
    seen.add(position);
    return position;
  });
}

/**
 * Refuses a cycle, naming its steps in order: `a → b → a`. A depth-first walk on a stack of its
 * own, not recursion: a chain of `maxBatchSize` steps cannot overflow the call stack.
 */
function checkAcyclic(raw: RawStep[], dependsOn: number[][], names: string[]): void {
  const state = new Array<0 | 1 | 2>(raw.length).fill(0); // unseen, on the path, done
  for (let root = 0; root < raw.length; root++) {
    if (state[root] !== 0) continue;
    // The path from `root`, each step with the next of its dependencies to look at.
    const path: Array<{ step: number; next: number }> = [{ step: root, next: 0 }];
    state[root] = 1;
    while (path.length > 0) {
      const top = path[path.length - 1];
      if (top.next === dependsOn[top.step].length) {
        state[top.step] = 2;
        path.pop();
        continue;
      }
      const dep = dependsOn[top.step][top.next++];
      if (state[dep] === 1) {
        const from = path.findIndex((entry) => entry.step === dep);
        const cycle = [...path.slice(from).map((entry) => entry.step), dep].map((k) => names[k]);
        const { path: field, dependsOn: value } = raw[top.step];
        jobInput.fail(`${field}dependsOn`, value, `no cycle (${cycle.join(' → ')})`);
      }
      if (state[dep] === 0) {
        state[dep] = 1;
        path.push({ step: dep, next: 0 });
      }
    }
  }
}

/** One job's options, as `enqueueMany` checks an item's, without the uniqueness ones. */
function flowJobRow(
  path: string,
  item: Record<string, unknown>,
  caps: BatchCaps,
  retentionOf: RetentionOf,
): CheckedInsertRow {
  for (const key of UNIQUENESS_KEYS) {
    if (item[key] !== undefined)
      jobInput.fail(`${path}${key}`, item[key], 'no uniqueness option in a flow');
  }
  return toJobInsertRow(path, item as never, caps.maxPayloadBytes, retentionOf);
}

export function checkPolicy(field: string, value: unknown): DependencyFailurePolicy {
  if (value === undefined) return 'fail';
  if (value !== 'fail' && value !== 'continue') jobInput.fail(field, value, "'fail' or 'continue'");
  return value;
}

function tooManyDependencies(field: string, count: number): never {
  throw new InvalidJobInputError(
    `Too many dependencies for one job: ${count}, at most ${MAX_DEPENDENCIES}.`,
    field,
    `<${count} dependencies>`,
  );
}

/** `enqueue`'s `dependsOn`: job ids, each listed once, at most `MAX_DEPENDENCIES`. */
export function checkDependsOn(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    jobInput.fail('dependsOn', value, 'a non-empty array of job ids');
  }
  if (value.length > MAX_DEPENDENCIES) tooManyDependencies('dependsOn', value.length);
  const ids = value.map((id: unknown, i) => checkJobId(`dependsOn[${i}]`, id));
  const first = new Map<string, number>();
  ids.forEach((id, i) => {
    if (first.has(id)) jobInput.fail(`dependsOn[${i}]`, value[i], 'a job listed once');
    first.set(id, i);
  });
  return ids;
}

/** `enqueue` with `dependsOn` refuses the options its insert cannot honour. */
export function checkDependentOptions(options: Record<string, unknown>): void {
  for (const key of UNIQUENESS_KEYS) {
    if (options[key] !== undefined)
      jobInput.fail(key, options[key], 'no uniqueness option with dependsOn');
  }
}
