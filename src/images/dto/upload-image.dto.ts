import { IsText } from '../../common/validation/validators';

/** `POST /images`: `{ "name": "cat.png" }`. */
export class UploadImageDto {
  @IsText()
  name!: string;
}
