import { DependencyResult, DependencyResults } from '../interfaces/flow.interface';
import { DependencyRow } from '../sql/dependency-results.query';

/** The rows of a job's dependencies as `ctx.dependencyResults()` gives them. */
export function toDependencyResults(rows: readonly DependencyRow[]): DependencyResults {
  const all = rows.map((row): DependencyResult => ({
    jobId: row.id,
    stepName: row.step_name,
    type: row.job_type,
    status: row.status,
    result: row.status === 'completed' ? row.result : null,
    // The first line: a stack's paths stay in the dependency's own row.
    error: row.last_error === null ? null : row.last_error.split('\n', 1)[0],
  }));
  return {
    all,
    byJobId: Object.fromEntries(all.map((d) => [d.jobId, d])),
    byStep: Object.fromEntries(all.flatMap((d) => (d.stepName === null ? [] : [[d.stepName, d]]))),
    failed: all.filter((d) => d.status !== 'completed'),
  };
}
