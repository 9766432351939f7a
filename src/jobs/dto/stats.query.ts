import { IfSent, IsIntIn, QueryInt } from '../../common/validation/validators';

/** `GET /jobs/stats?maxAgeMs=0`: how old the snapshot may be (0: count now). */
export class StatsQuery {
  @QueryInt()
  @IfSent()
  @IsIntIn(0, 86_400_000)
  maxAgeMs?: number;
}
