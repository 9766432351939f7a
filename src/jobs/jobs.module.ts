import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Job } from 'nest-pg-job-queue';
import { JobsController } from './jobs.controller';

@Module({ imports: [TypeOrmModule.forFeature([Job])], controllers: [JobsController] })
export class JobsModule {}
