/** The fire times one tick enqueued late (see `FirePlan.late`), summed up for one log line. */
export class LateFires {
  count = 0;
  schedules = 0;
  oldest: { name: string; fireAt: Date } | undefined;

  add(name: string, late: Date[]): void {
    if (late.length === 0) return;
    this.count += late.length;
    this.schedules += 1;
    if (!this.oldest || late[0] < this.oldest.fireAt) this.oldest = { name, fireAt: late[0] };
  }
}
