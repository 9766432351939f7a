import { Job } from '../entities/job.entity';
import { DependencyFailurePolicy, JobOptions } from './enqueue-options.interface';

/** A flow job's options: any job's, but for the uniqueness ones. @publicApi */
export type FlowJobOptions = Omit<
  JobOptions,
  'uniqueKey' | 'uniqueStates' | 'uniqueForMs' | 'debounceMs' | 'throttleMs'
>;

/**
 * One named step of a flow given as a graph (`QueueService.flow({ steps })`).
 *
 * @publicApi
 */
export interface FlowStep<T = unknown> extends FlowJobOptions {
  /** Its name in the flow, unique in it: 1 to 255 characters. */
  name: string;
  /** The job's type. */
  type: string;
  /** The job's data. */
  data: T;
  /** Names of the steps it waits for. A cycle is refused. */
  dependsOn?: string[];
  /** Default `fail`. */
  onDependencyFailure?: DependencyFailurePolicy;
}

/**
 * A flow given as a tree (`QueueService.flow(root)`): a job runs once its `children` have all
 * finished, so the leaves run first and the root last (a merge after a fan-out). A node without
 * a `name` is named by its place: `root`, `root.0`, `root.0.3`.
 *
 * @publicApi
 */
export interface FlowNode<T = unknown> extends FlowJobOptions {
  /** Its step name; default its place in the tree. */
  name?: string;
  /** The job's type. */
  type: string;
  /** The job's data. */
  data: T;
  /** The jobs this one waits for, each a tree of its own. */
  children?: FlowNode[];
  /** What a failed child does to this job. Default `fail`. */
  onDependencyFailure?: DependencyFailurePolicy;
}

/** What `QueueService.flow` takes: a graph of named steps, or a tree. @publicApi */
export type FlowDefinition = { steps: FlowStep[] } | FlowNode;

/**
 * What `QueueService.flow` made: the flow's id (for `cancelFlow`) and its jobs, in the order the
 * steps were given (a tree: each node before its children), and by step name.
 *
 * @publicApi
 */
export interface FlowResult {
  /** The flow's id, on each of its jobs (`job.flowId`). */
  flowId: string;
  /** Its jobs, in the order of the definition. */
  jobs: Job[];
  /** Its jobs by step name. */
  steps: Record<string, Job>;
}

/**
 * One dependency of the running job, as `ctx.dependencyResults()` gives it.
 *
 * @publicApi
 */
export interface DependencyResult<R = unknown> {
  /** The dependency's id. */
  jobId: string;
  /** Its step name, when it is in a flow. */
  stepName: string | null;
  /** Its job type. */
  type: string;
  /** `completed`, or with `onDependencyFailure: 'continue'`, `failed` or `cancelled`. */
  status: string;
  /** What its handler returned (`completed`), else `null`. */
  result: R | null;
  /** The first line of its last error, if any. */
  error: string | null;
}

/**
 * The running job's dependencies: every one in id order, by job id, by step name (those in a
 * flow), and those that did not complete.
 *
 * @publicApi
 */
export interface DependencyResults {
  /** Every dependency, in id order. */
  all: DependencyResult[];
  /** By job id. */
  byJobId: Record<string, DependencyResult>;
  /** By step name: the dependencies in a flow. */
  byStep: Record<string, DependencyResult>;
  /** Those that failed or were cancelled (only under `onDependencyFailure: 'continue'`). */
  failed: DependencyResult[];
}
