import { Module } from '@nestjs/common';
import { ReportHandlers } from './report.handlers';
import { DailyReportHandler } from './daily-report.handler';
import { MonthlyReportHandlers } from './monthly-report.handlers';
import { ReportsController } from './reports.controller';

@Module({
  controllers: [ReportsController],
  providers: [ReportHandlers, DailyReportHandler, MonthlyReportHandlers],
})
export class ReportsModule {}
