import { Module } from '@nestjs/common';
import { AuditedUploadService } from './audited-upload.service';
import { ImageHandlers } from './image.handlers';
import { ImagesController } from './images.controller';

@Module({ controllers: [ImagesController], providers: [ImageHandlers, AuditedUploadService] })
export class ImagesModule {}
