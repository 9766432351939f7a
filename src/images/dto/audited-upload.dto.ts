import { IsText } from '../../common/validation/validators';

/** `POST /images/audited`: `{ "name": "cat.png", "uploadedBy": "alice" }`. */
export class AuditedUploadDto {
  @IsText()
  name!: string;

  /** Who uploaded it, for the audit line. */
  @IsText(100)
  uploadedBy!: string;
}
