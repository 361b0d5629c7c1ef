import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditTrail } from './audit-trail.js';
import { AuditEvent } from './entities/audit-event.entity.js';

/**
 * The audit trail of management, for the modules that manage tokens and subscriptions.
 * It logs through nestjs-pino's logger: the importing application provides it
 * (LoggingModule, or CommandLoggingModule in a CLI).
 */
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent])],
  providers: [AuditTrail],
  exports: [AuditTrail],
})
export class AuditModule {}
