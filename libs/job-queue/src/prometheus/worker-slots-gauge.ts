import { Gauge } from 'prom-client';
import { RunningJobs } from '../worker/running-jobs';

/**
 * `<prefix>worker_slots{state="busy"|"free"}`: this process's worker, read at scrape time: busy,
 * the runs it holds (prefetched jobs wait outside them); free, `concurrency` minus those.
 */
export function workerSlotsGauge(prefix: string, running: RunningJobs, concurrency: number): Gauge {
  const slots: Gauge<'state'> = new Gauge({
    name: `${prefix}worker_slots`,
    help: "This process's worker slots, busy (running a job) or free.",
    labelNames: ['state'],
    registers: [],
    collect: () => {
      // A job cancelled and claimed again may hold two runs for a moment: never a negative free.
      const busy = running.size;
      slots.set({ state: 'busy' }, busy);
      slots.set({ state: 'free' }, Math.max(0, concurrency - busy));
    },
  });
  return slots;
}
