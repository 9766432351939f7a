export * from './job-handler.decorator';
