import { Job } from '../../entities/job.entity';
import { isFinishedStatus } from '../../entities/job-status.enum';
import { CliError } from '../cli.errors';
import { usageOf } from '../cli.messages';
import { Command } from '../command';
import { confirmBulk } from '../confirm';
import { flowTable } from '../job-format';
import { plain } from '../terminal';
import { QueueService } from '../../queue.service';

/** The flow's jobs; exit 1 (`not_found`) when none is left, as for an unknown job id. */
async function flowJobs(queue: QueueService, flowId: string): Promise<Job[]> {
  const jobs = await queue.getFlow(flowId);
  if (jobs.length === 0) {
    throw new CliError(
      'not_found',
      `no flow with id '${plain(flowId)}': none of its jobs exists (unknown, or pruned whole)`,
    );
  }
  return jobs;
}

export const flowCommand: Command = {
  name: 'flow',
  usage: 'flow <flowId>',
  summary: "a flow's jobs, in the order flow() made them, with their steps and statuses",
  args: ['flowId'],
  run: async ({ args: [flowId], out, withQueue }) => {
    const jobs = await withQueue((queue) => flowJobs(queue, flowId));
    const id = jobs[0].flowId ?? flowId;
    out.result({ flowId: id, jobs }, () => flowTable(out, jobs));
  },
};

export const cancelFlowCommand: Command = {
  name: 'cancel-flow',
  usage: 'cancel-flow <flowId> [--yes]',
  summary: "cancels a flow's unfinished jobs (its finished ones stay as they are)",
  args: ['flowId'],
  bulk: true,
  run: async ({ args: [flowId], options, out, io, withQueue }) => {
    const { id, cancelled } = await withQueue(async (queue) => {
      const jobs = await flowJobs(queue, flowId);
      const unfinished = jobs.filter((job) => !isFinishedStatus(job.status)).length;
      const flow = jobs[0].flowId ?? flowId;
      if (unfinished > 0) {
        await confirmBulk(
          io,
          options.yes === true,
          `Cancel the ${unfinished} unfinished job(s) of flow ${plain(flow)}`,
          usageOf(cancelFlowCommand),
        );
      }
      return { id: flow, cancelled: unfinished > 0 ? await queue.cancelFlow(flow) : [] };
    });
    out.result({ flowId: id, cancelled }, () => [
      `${cancelled.length} unfinished job(s) of flow ${plain(id)} cancelled`,
    ]);
  },
};
