import { requirePeer } from '../instrumentation/require-peer';

// Imported first by this entry point's index: before anything loads prom-client.
requirePeer('nest-pg-job-queue/prometheus', 'prom-client');
