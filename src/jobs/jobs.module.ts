import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Job } from 'nest-pg-job-queue';
import { JobsController } from './jobs.controller';
import { JobEventStream } from './job-event.stream';

@Module({
  imports: [TypeOrmModule.forFeature([Job])],
  controllers: [JobsController],
  providers: [JobEventStream],
})
export class JobsModule {}
