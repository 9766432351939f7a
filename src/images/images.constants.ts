export const IMAGE_PROCESS_JOB = 'image.process';
/** Uploads a user is waiting for overtake bulk imports. */
export const USER_UPLOAD_PRIORITY = 200;
export const BULK_IMPORT_PRIORITY = 10;
export const MAX_BULK_IMAGES = 10_000;

export interface ImageJobData {
  name: string;
  source: 'upload' | 'bulk';
}
