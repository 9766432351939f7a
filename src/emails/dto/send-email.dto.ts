import { IsLike, IsText } from '../../common/validation/validators';

const TENANT = /^[a-z0-9-]{1,64}$/;

/** `POST /emails`: `{ "tenantId": "acme", "to": "ops@acme.test", "subject": "Invoice" }`. */
export class SendEmailDto {
  @IsLike(TENANT, 'a tenant id of 1-64 lowercase letters, digits or dashes')
  tenantId!: string;

  @IsText(320)
  to!: string;

  @IsText(200)
  subject!: string;
}
