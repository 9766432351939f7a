import { Module } from '@nestjs/common';
import { ReportHandlers } from './report.handlers';
import { ReportsController } from './reports.controller';

@Module({ controllers: [ReportsController], providers: [ReportHandlers] })
export class ReportsModule {}
