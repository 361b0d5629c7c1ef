import { Module } from '@nestjs/common';
import { ShutdownService } from './shutdown.service.js';

@Module({ providers: [ShutdownService] })
export class ShutdownModule {}
