import { Module } from '@nestjs/common';
import { ImageHandlers } from './image.handlers';
import { ImagesController } from './images.controller';

@Module({ controllers: [ImagesController], providers: [ImageHandlers] })
export class ImagesModule {}
