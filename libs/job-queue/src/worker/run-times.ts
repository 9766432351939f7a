import { Injectable } from '@nestjs/common';

/** Runs per type a median is taken over: the latest ones, so it follows a type that changes. */
const SAMPLES_PER_TYPE = 31;

/**
 * How long this worker's recent runs of each type took (from start to settling, by a monotonic
 * clock): the median of the last `SAMPLES_PER_TYPE`, for how long a held job may wait for a slot.
 */
@Injectable()
export class RunTimes {
  /**
   * Each type's latest run times, a ring, and their median once asked for (kept until the next
   * run: the hold limit asks for it per held job, on every claim).
   */
  private readonly samples = new Map<
    string,
    { ms: number[]; next: number; median: number | undefined }
  >();
  /** Every type's runs together, under a key no job type has (types are non-blank). */
  private static readonly ALL = '';

  record(jobType: string, ms: number): void {
    this.add(jobType, ms);
    this.add(RunTimes.ALL, ms);
  }

  /** The median run time of the worker's latest runs, whatever their type. */
  medianOfAll(): number | undefined {
    return this.median(RunTimes.ALL);
  }

  private add(jobType: string, ms: number): void {
    let type = this.samples.get(jobType);
    if (!type) this.samples.set(jobType, (type = { ms: [], next: 0, median: undefined }));
    if (type.ms.length < SAMPLES_PER_TYPE) type.ms.push(ms);
    else type.ms[type.next] = ms;
    type.next = (type.next + 1) % SAMPLES_PER_TYPE;
    type.median = undefined;
  }

  /** The median run time of `jobType` here, in ms; `undefined` before its first run ends. */
  median(jobType: string): number | undefined {
    const type = this.samples.get(jobType);
    if (!type) return undefined;
    if (type.median === undefined) {
      const sorted = [...type.ms].sort((a, b) => a - b);
      const middle = sorted.length >> 1;
      type.median =
        sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
    return type.median;
  }
}
