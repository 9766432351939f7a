// Half of a cycle that `import-x/no-cycle` must reject (scripts/check-import-rules.mjs).
import { second } from './second';

export const first = (): string => `first, then ${second()}`;
