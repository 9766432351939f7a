import { Command } from '../command';
import { plain } from '../terminal';

export const schedulesCommand: Command = {
  name: 'schedules',
  usage: 'schedules',
  summary: 'recurring jobs, with their next and last fire times',
  run: async ({ out, withQueue }) => {
    const schedules = await withQueue((queue) => queue.schedules());
    out.result({ schedules }, () =>
      schedules.length === 0
        ? ['no schedules']
        : out.table(
            ['NAME', 'CRON', 'TIMEZONE', 'TYPE', 'SOURCE', 'NEXT FIRE', 'LAST FIRE'],
            schedules.map((schedule) => [
              plain(schedule.name, 40),
              plain(schedule.cron),
              plain(schedule.timezone),
              plain(schedule.jobType, 40),
              schedule.source,
              plain(schedule.nextFireAt),
              plain(schedule.lastFireAt),
            ]),
          ),
    );
  },
};

export const runScheduleCommand: Command = {
  name: 'run-schedule',
  usage: 'run-schedule <name>',
  summary: "enqueues a schedule's job now (its fire times stay as they are)",
  args: ['name'],
  run: async ({ args: [name], out, withQueue }) => {
    const job = await withQueue((queue) => queue.runSchedule(name));
    out.result({ job }, () => [`job ${job.id} enqueued (${plain(job.jobType)}, ${job.status})`]);
  },
};
