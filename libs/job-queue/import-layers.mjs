// The folders of libs/job-queue/src, bottom to top (see ARCHITECTURE.md): each may import only
// what is listed before it. eslint.config.mjs turns this list into `import-x/no-restricted-paths`
// zones; `import-x/no-cycle` forbids cycles between files, within a folder too.
export const IMPORT_LAYERS = [
  { name: 'base', paths: ['job-queue.constants.ts', 'job-queue.messages.ts'] },
  { name: 'entities', paths: ['entities'] },
  { name: 'errors', paths: ['errors'] },
  { name: 'interfaces', paths: ['interfaces'] },
  { name: 'validation', paths: ['validation'] },
  // retention.options.ts re-exports a type of options/ for sql/prune-jobs.query.ts.
  { name: 'options', paths: ['options', 'retention.options.ts'] },
  { name: 'sql', paths: ['sql'] },
  { name: 'retry', paths: ['retry'] },
  { name: 'periodic', paths: ['periodic'] },
  { name: 'instrumentation', paths: ['instrumentation'] },
  { name: 'decorators', paths: ['decorators'] },
  { name: 'queue', paths: ['queue'] },
  { name: 'stats', paths: ['stats'] },
  { name: 'cron', paths: ['cron'] },
  { name: 'discovery', paths: ['discovery'] },
  { name: 'events', paths: ['events'] },
  { name: 'maintenance', paths: ['maintenance'] },
  { name: 'worker', paths: ['worker'] },
  {
    name: 'module',
    paths: [
      'queue.service.ts',
      'job-queue.options.ts',
      'job-queue.module-definition.ts',
      'job-queue.providers.ts',
      'job-queue.module.ts',
      'index.ts',
    ],
  },
  // The entry points beside the main one, and the command line (the package's bin), each a user
  // of the module's public pieces.
  {
    name: 'entry points',
    paths: ['testing', 'terminus', 'prometheus', 'opentelemetry', 'dashboard', 'cli'],
  },
];

/** `no-restricted-paths` zones for the layers under `root`: a layer imports nothing above it. */
export function layerZones(root) {
  const at = (path) => `${root}/${path}`;
  return IMPORT_LAYERS.slice(0, -1).map((layer, i) => ({
    target: layer.paths.map(at),
    from: IMPORT_LAYERS.slice(i + 1).flatMap((above) => above.paths.map(at)),
    message: `${layer.name} imports only the layers below it (libs/job-queue/ARCHITECTURE.md).`,
  }));
}
