import { requirePeer } from '../instrumentation/require-peer';

// Imported first by this entry point's index: before anything loads @opentelemetry/api.
requirePeer('nest-pg-job-queue/opentelemetry', '@opentelemetry/api');
