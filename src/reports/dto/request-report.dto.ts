import { IsLike } from '../../common/validation/validators';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** `POST /reports` and `POST /reports/monthly`: `{ "month": "2026-11" }`. */
export class RequestReportDto {
  @IsLike(MONTH, 'a month like "2026-11"')
  month!: string;
}
