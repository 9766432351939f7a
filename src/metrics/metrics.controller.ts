import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { register } from 'prom-client';
import { AdminTokenGuard } from '../common/admin-token.guard';

/**
 * `GET /metrics`: prom-client's default registry (the queue's metrics, and whatever else the app
 * registers there) in Prometheus' text format. An operator route like /jobs, so it wants the
 * admin token: Prometheus sends it from the scrape config
 * (`authorization: { credentials_file: … }`).
 */
@Controller('metrics')
@UseGuards(AdminTokenGuard)
export class MetricsController {
  @Get()
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
