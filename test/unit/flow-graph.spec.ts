import { InvalidJobInputError } from '../../libs/job-queue/src/errors';
import { FlowNode } from '../../libs/job-queue/src/interfaces/flow.interface';
import { ResolvedRetention } from '../../libs/job-queue/src/options/resolved-options';
import { toFlowGraph } from '../../libs/job-queue/src/queue/flow-graph';

const CAPS = { maxBatchSize: 10_000, maxBatchBytes: 100_000_000, maxPayloadBytes: 1_000_000 };
const retention = (): ResolvedRetention => ({
  completedMs: null,
  failedMs: null,
  cancelledMs: null,
});

/** `flow()`'s checks, before anything is sent. */
describe('toFlowGraph', () => {
  it('takes a chain as long as maxBatchSize in either form (no recursion to overflow)', () => {
    const steps = Array.from({ length: CAPS.maxBatchSize }, (_, i) => ({
      name: `s${i}`,
      type: 't',
      data: {},
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    }));
    expect(toFlowGraph({ steps }, CAPS, retention).edges).toHaveLength(CAPS.maxBatchSize - 1);
    let node: FlowNode = { name: 'n0', type: 't', data: {} };
    for (let i = 1; i < CAPS.maxBatchSize; i++) {
      node = { name: `n${i}`, type: 't', data: {}, children: [node] };
    }
    const tree = toFlowGraph(node, CAPS, retention);
    expect(tree.names.slice(0, 2)).toEqual([
      `n${CAPS.maxBatchSize - 1}`,
      `n${CAPS.maxBatchSize - 2}`,
    ]);
    expect(tree.edges).toHaveLength(CAPS.maxBatchSize - 1);
  });

  it('names a tree node by its place, each node before its children, children in order', () => {
    const graph = toFlowGraph(
      {
        type: 'merge',
        data: null,
        children: [
          { type: 'a', data: null, children: [{ type: 'a1', data: null }] },
          { name: 'b', type: 'b', data: null },
        ],
      },
      CAPS,
      retention,
    );
    expect(graph.names).toEqual(['root', 'root.0', 'root.0.0', 'b']);
    expect(graph.edges).toEqual([
      { job: 1, step: 2 },
      { job: 1, step: 4 },
      { job: 2, step: 3 },
    ]);
    expect(graph.jobs.map((job) => [job.status, job.hasDependants])).toEqual([
      ['blocked', false],
      ['blocked', true],
      [null, true],
      [null, true],
    ]);
  });

  it('names the steps of a cycle in order, and refuses a bad policy even on a step without dependencies', () => {
    const cycle = () =>
      toFlowGraph(
        {
          steps: [
            { name: 'a', type: 't', data: {}, dependsOn: ['b'] },
            { name: 'b', type: 't', data: {}, dependsOn: ['a'] },
          ],
        },
        CAPS,
        retention,
      );
    expect(cycle).toThrow(InvalidJobInputError);
    expect(cycle).toThrow('no cycle (a → b → a)');
    expect(() =>
      toFlowGraph(
        { steps: [{ name: 'a', type: 't', data: {}, onDependencyFailure: 'ignore' as never }] },
        CAPS,
        retention,
      ),
    ).toThrow(expect.objectContaining({ field: 'steps[0].onDependencyFailure' }));
  });
});
