import { JobStatus } from '../../entities/job-status.enum';
import { Command } from '../command';
import { statusCell } from '../job-format';
import { plain } from '../terminal';

const STATUSES = Object.values(JobStatus);

export const statsCommand: Command = {
  name: 'stats',
  usage: 'stats [--fresh]',
  summary:
    "jobs by type and status, and whether each type is paused (--fresh: counted now, not the queue's snapshot)",
  options: { fresh: { type: 'boolean' } },
  run: async ({ options, out, withQueue }) => {
    const stats = await withQueue((queue) =>
      queue.stats(options.fresh === true ? { maxAgeMs: 0 } : {}),
    );
    const types = Object.keys(stats).sort();
    out.result({ types: stats }, () =>
      types.length === 0
        ? ['no jobs']
        : out.table(
            ['TYPE', ...STATUSES.map((status) => status.toUpperCase()), 'PAUSED'],
            types.map((type) => [
              plain(type, 40),
              ...STATUSES.map((status) =>
                stats[type][status] > 0
                  ? { ...statusCell(status), text: String(stats[type][status]) }
                  : '0',
              ),
              stats[type].paused ? { text: 'paused', colour: 'red' } : '-',
            ]),
          ),
    );
  },
};
