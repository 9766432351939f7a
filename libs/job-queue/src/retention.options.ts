// sql/prune-jobs.query.ts (kept by the migrations work) still imports the type from here; once it
// imports options/resolved-options, delete this file.
export type { ResolvedRetention } from './options/resolved-options';
