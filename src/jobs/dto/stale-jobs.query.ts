import { IfSent, IsIntIn, QueryInt } from '../../common/validation/validators';

/** `GET /jobs/stale?olderThanMinutes=10` (default 10). */
export class StaleJobsQuery {
  @QueryInt()
  @IfSent()
  @IsIntIn(0, 525_600)
  olderThanMinutes?: number;
}
