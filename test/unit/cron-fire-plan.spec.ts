import { CronTimes, cronTimes } from '../../libs/job-queue/src/cron/cron-expression';
import {
  MAX_BEHIND_MS,
  MAX_LATENESS_MS,
  MIN_LATENESS_MS,
  planFires,
} from '../../libs/job-queue/src/cron/fire-plan';

const at = (iso: string) => new Date(iso);
const iso = (dates: Date[]) => dates.map((date) => date.toISOString());
const everySecond: CronTimes = cronTimes({ cron: '* * * * * *', timezone: 'UTC' });
const everyMinute: CronTimes = cronTimes({ cron: '0 * * * * *', timezone: 'UTC' });
const daily6: CronTimes = cronTimes({ cron: '0 6 * * *', timezone: 'UTC' });

describe('planFires: which fire times a due schedule enqueues', () => {
  it('enqueues the one fire time that just came, and moves on to the next', () => {
    const plan = planFires(
      daily6,
      at('2026-12-01T06:00:00Z'),
      'once',
      at('2026-12-01T06:00:00.4Z'),
    );
    expect(iso(plan.fireTimes)).toEqual(['2026-12-01T06:00:00.000Z']);
    expect(plan.nextFireAt).toEqual(at('2026-12-02T06:00:00Z'));
  });

  it('enqueues nothing for a schedule not yet due', () => {
    const plan = planFires(daily6, at('2026-12-02T06:00:00Z'), 'once', at('2026-12-01T07:00:00Z'));
    expect(plan).toEqual({
      fireTimes: [],
      nextFireAt: at('2026-12-02T06:00:00Z'),
      missedSince: null,
      missedWhileTicking: false,
      late: [],
    });
  });

  it('gives each fire time a late tick still finds on time a job of its own (none merged)', () => {
    // Every second, the ticks 1.5 s late: both fire times are within MIN_LATENESS_MS.
    const plan = planFires(
      everySecond,
      at('2026-12-01T00:00:01Z'),
      'skip',
      at('2026-12-01T00:00:02.5Z'),
    );
    expect(iso(plan.fireTimes)).toEqual(['2026-12-01T00:00:01.000Z', '2026-12-01T00:00:02.000Z']);
    expect(plan.nextFireAt).toEqual(at('2026-12-01T00:00:03Z'));
    expect(plan.missedSince).toBeNull();
  });

  it('merges the fire times missed while no node ran into one job (once), for the newest', () => {
    // Daily at 06:00, every node down for three days: three fire times missed, then back at noon.
    const plan = planFires(daily6, at('2026-11-28T06:00:00Z'), 'once', at('2026-12-01T12:00:00Z'));
    expect(iso(plan.fireTimes)).toEqual(['2026-12-01T06:00:00.000Z']);
    expect(plan.nextFireAt).toEqual(at('2026-12-02T06:00:00Z'));
    expect(plan.missedSince).toEqual(at('2026-11-28T06:00:00Z'));
  });

  it('skips the fire times missed while no node ran (skip)', () => {
    const plan = planFires(daily6, at('2026-11-28T06:00:00Z'), 'skip', at('2026-12-01T12:00:00Z'));
    expect(plan).toEqual({
      fireTimes: [],
      nextFireAt: at('2026-12-02T06:00:00Z'),
      missedSince: at('2026-11-28T06:00:00Z'),
      missedWhileTicking: false,
      late: [],
    });
  });

  it('counts a fire time as missed once it is later than its period (capped at a minute)', () => {
    // Every minute: 06:00 is missed at 06:01:00.5 (its successor came), 06:01 is on time.
    const plan = planFires(
      everyMinute,
      at('2026-12-01T06:00:00Z'),
      'once',
      at('2026-12-01T06:01:00.5Z'),
    );
    expect(iso(plan.fireTimes)).toEqual(['2026-12-01T06:01:00.000Z']);
    // Daily: on time for MAX_LATENESS_MS, missed after.
    const fire = at('2026-12-01T06:00:00Z');
    const justOnTime = new Date(fire.getTime() + MAX_LATENESS_MS);
    expect(iso(planFires(daily6, fire, 'skip', justOnTime).fireTimes)).toEqual([
      fire.toISOString(),
    ]);
    const late = new Date(justOnTime.getTime() + 1);
    expect(planFires(daily6, fire, 'skip', late).fireTimes).toEqual([]);
    expect(iso(planFires(daily6, fire, 'once', late).fireTimes)).toEqual([fire.toISOString()]);
  });

  it('lets even a per-second schedule be MIN_LATENESS_MS late before a fire time counts as missed', () => {
    const fire = at('2026-12-01T00:00:10Z');
    const now = new Date(fire.getTime() + MIN_LATENESS_MS);
    expect(iso(planFires(everySecond, fire, 'skip', now).fireTimes)).toEqual([
      '2026-12-01T00:00:10.000Z',
      '2026-12-01T00:00:11.000Z',
      '2026-12-01T00:00:12.000Z',
    ]);
    // Down an hour: only the last MIN_LATENESS_MS are on time, the rest are dropped, not N jobs.
    const plan = planFires(
      everySecond,
      at('2026-12-01T00:00:00Z'),
      'once',
      at('2026-12-01T01:00:00.5Z'),
    );
    expect(iso(plan.fireTimes)).toEqual(['2026-12-01T00:59:59.000Z', '2026-12-01T01:00:00.000Z']);
  });

  describe('while workers ticked (tickingSince)', () => {
    it('gives each fire time that came while workers ticked its own job, however late', () => {
      // Ticking since 00:00:00.5; the schedule left at 00:00:01 (a long tick), found at 00:00:30.5.
      const plan = planFires(
        everySecond,
        at('2026-12-01T00:00:01Z'),
        'skip',
        at('2026-12-01T00:00:30.5Z'),
        at('2026-12-01T00:00:00.5Z'),
      );
      expect(plan.fireTimes).toHaveLength(30);
      expect(plan.fireTimes[0]).toEqual(at('2026-12-01T00:00:01Z'));
      expect(plan.missedSince).toBeNull();
      // Late: older than MIN_LATENESS_MS, on time only because workers ticked after they came.
      expect(iso(plan.late)).toEqual(iso(plan.fireTimes.slice(0, 28)));
    });

    it('counts only the fire times before the run of ticks began as missed', () => {
      // Every worker down until 00:01:00.2; the ticks since then found it at 00:01:05.5.
      const plan = planFires(
        everySecond,
        at('2026-12-01T00:00:01Z'),
        'once',
        at('2026-12-01T00:01:05.5Z'),
        at('2026-12-01T00:01:00.2Z'),
      );
      expect(plan.fireTimes[0]).toEqual(at('2026-12-01T00:01:01Z'));
      expect(plan.fireTimes.at(-1)).toEqual(at('2026-12-01T00:01:05Z'));
      expect(plan.missedSince).toEqual(at('2026-12-01T00:00:01Z'));
      expect(plan.missedWhileTicking).toBe(false);
      expect(iso(plan.late)).toEqual([
        '2026-12-01T00:01:01.000Z',
        '2026-12-01T00:01:02.000Z',
        '2026-12-01T00:01:03.000Z',
      ]);
    });

    it(`enqueues at most MAX_BEHIND_MS of them; older ones were missed though workers ticked`, () => {
      const now = at('2026-12-01T12:00:00.5Z');
      const plan = planFires(
        everySecond,
        at('2026-12-01T00:00:00Z'),
        'skip',
        now,
        at('2026-12-01T00:00:00Z'),
      );
      expect(plan.fireTimes).toHaveLength(MAX_BEHIND_MS / 1_000);
      expect(plan.fireTimes[0].getTime()).toBeGreaterThanOrEqual(now.getTime() - MAX_BEHIND_MS);
      expect(plan.missedSince).toEqual(at('2026-12-01T00:00:00Z'));
      expect(plan.missedWhileTicking).toBe(true);
    });
  });

  describe('in a time zone with daylight saving (Europe/Berlin)', () => {
    const berlin = (cron: string) => cronTimes({ cron, timezone: 'Europe/Berlin' });

    it('fires 06:00 local at 05:00Z in winter and 04:00Z in summer', () => {
      const times = berlin('0 6 * * *');
      // Spring forward on 2026-03-29: 06:00 is CET the day before, CEST that day.
      const before = planFires(
        times,
        at('2026-03-28T05:00:00Z'),
        'once',
        at('2026-03-28T05:00:01Z'),
      );
      expect(before.nextFireAt).toEqual(at('2026-03-29T04:00:00Z'));
      const after = planFires(
        times,
        at('2026-10-24T04:00:00Z'),
        'once',
        at('2026-10-24T04:00:01Z'),
      );
      expect(after.nextFireAt).toEqual(at('2026-10-25T05:00:00Z')); // fall back on the 25th
    });

    it('fires a time inside the spring-forward gap once, right after it; a repeated hour once', () => {
      const times = berlin('30 2 * * *');
      // 02:30 does not exist on 2026-03-29 (02:00 → 03:00): fired at 03:00 CEST = 01:00Z.
      const spring = planFires(
        times,
        at('2026-03-28T01:30:00Z'),
        'once',
        at('2026-03-28T01:30:01Z'),
      );
      expect(spring.nextFireAt).toEqual(at('2026-03-29T01:00:00Z'));
      // 02:30 occurs twice on 2026-10-25: fired at the first (CEST, 00:30Z), not again at 01:30Z.
      const fall = planFires(times, at('2026-10-25T00:30:00Z'), 'once', at('2026-10-25T00:30:01Z'));
      expect(iso(fall.fireTimes)).toEqual(['2026-10-25T00:30:00.000Z']);
      expect(fall.nextFireAt).toEqual(at('2026-10-26T01:30:00Z'));
    });
  });
});
