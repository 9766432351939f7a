export * from './job-queue.error';
export * from './invalid-job-queue-options.error';
export * from './invalid-job-input.error';
export * from './job-not-found.error';
export * from './job-state-conflict.error';
export * from './duplicate-job-handler.error';
export * from './job-run-errors';
export * from './job-queue-unavailable.error';
