import { requirePeer } from '../instrumentation/require-peer';

// Imported first by this entry point's index: before anything loads @nestjs/terminus.
requirePeer('nest-pg-job-queue/terminus', '@nestjs/terminus');
