export * from './job-handler.decorator';
export * from './on-job-event.decorator';
export * from './inject-job.decorator';
