import { Module } from '@nestjs/common';
import { EmailHandlers } from './email.handlers';
import { EmailsController } from './emails.controller';

@Module({ controllers: [EmailsController], providers: [EmailHandlers] })
export class EmailsModule {}
