import { getMetadataArgsStorage } from 'typeorm';
import { Job } from '../entities/job.entity';

/** One column of `jobs` and the `Job` property it maps to. */
export interface JobColumn {
  column: string;
  property: string;
  timestamptz: boolean;
}

let columns: JobColumn[] | undefined;

/**
 * The `jobs` columns, read from the entity's own metadata so that no mapping in this folder can
 * drift from `job.entity.ts`.
 */
export function jobColumns(): readonly JobColumn[] {
  columns ??= getMetadataArgsStorage()
    .filterColumns(Job)
    .map((column) => ({
      column: column.options.name ?? column.propertyName,
      property: column.propertyName,
      timestamptz: column.options.type === 'timestamptz',
    }));
  return columns;
}
