import { Module } from '@nestjs/common';
import { JobQueueDashboardModule } from 'nest-pg-job-queue/dashboard';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { SignInController } from './sign-in.controller';

/**
 * The queue's dashboard at /queue, behind the same guard as the management routes, and the
 * sign-in form that gives a browser the session cookie that guard accepts.
 */
@Module({
  imports: [JobQueueDashboardModule.register({ path: '/queue', guard: AdminTokenGuard })],
  controllers: [SignInController],
})
export class DashboardModule {}
