// The other half of the cycle (scripts/check-import-rules.mjs).
import { first } from './first';

export const second = (): string => (first.length > 0 ? 'second' : '');
