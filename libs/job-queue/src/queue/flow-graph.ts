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
    return {
      row,
      stepName: names[i],
      status: waits ? 'blocked' : null,
      unfinishedDependencies: dependsOn[i].length,
      onDependencyFailure: waits
        ? checkPolicy(`${step.path}onDependencyFailure`, step.policy)
        : null,
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
  const steps: RawStep[] = [];
  const visit = (node: FlowNode, path: string, place: string): string => {
    const item = jobInput.plainObject(path.slice(0, -1) || 'flow', node) as Record<string, unknown>;
    const { name, children, onDependencyFailure, ...job } = item;
    const stepName = name === undefined ? place : name;
    const step: RawStep = {
      path,
      item: job,
      name: stepName,
      dependsOn: [],
      policy: onDependencyFailure,
    };
    steps.push(step);
    checkStepCount(steps.length, maxSteps);
    if (children === undefined) return String(stepName);
    if (!Array.isArray(children))
      jobInput.fail(`${path}children`, children, 'an array of flow nodes');
    if (children.length > MAX_DEPENDENCIES) tooManyDependencies(`${path}children`, children.length);
    step.dependsOn = children.map((child: FlowNode, i) =>
      visit(child, `${path}children[${i}].`, `${String(stepName)}.${i}`),
    );
    return String(stepName);
  };
  visit(definition, '', 'root');
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

/** Refuses a cycle, naming its steps in order: `a → b → a`. */
function checkAcyclic(raw: RawStep[], dependsOn: number[][], names: string[]): void {
  const state = new Array<0 | 1 | 2>(raw.length).fill(0); // unseen, on the path, done
  const path: number[] = [];
  const visit = (i: number): void => {
    state[i] = 1;
    path.push(i);
    for (const dep of dependsOn[i]) {
      if (state[dep] === 1) {
        const cycle = [...path.slice(path.indexOf(dep)), dep].map((k) => names[k]);
        jobInput.fail(
          `${raw[i].path}dependsOn`,
          raw[i].dependsOn,
          `no cycle (${cycle.join(' → ')})`,
        );
      }
      if (state[dep] === 0) visit(dep);
    }
    path.pop();
    state[i] = 2;
  };
  raw.forEach((_, i) => {
    if (state[i] === 0) visit(i);
  });
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
