import { IfSent, IsIntIn, IsText } from '../../common/validation/validators';
import { MAX_BULK_IMAGES } from '../images.constants';

/** `POST /images/bulk`: `{ "count": 500, "prefix": "archive" }`; the prefix defaults to `bulk`. */
export class BulkImagesDto {
  @IsIntIn(1, MAX_BULK_IMAGES)
  count!: number;

  @IfSent()
  @IsText()
  prefix?: string;
}
