import { type DestinationStream, type LoggerOptions, pino } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { loggerParams } from '../logging/logger-params.js';
import { AUDIT_LOG_CONTEXT, AUDIT_LOG_MESSAGE, auditLogFields } from './audit-record.js';
import type { ChainedAuditEvent } from './chain/audit-chain.js';

/** Writes an event's audit line, once its transaction has committed. */
export type AuditLog = (event: ChainedAuditEvent) => void;

/**
 * The audit line for a command that runs without Nest (`audit archive`, `webhook-secrets
 * re-encrypt`, `backup`, `restore`): the line the token CLI writes, on standard error, in
 * the service's log format (LOG_LEVEL, LOG_FORMAT), so that one log filter finds them all.
 */
export async function commandAuditLog(config: AppConfig): Promise<AuditLog> {
  const { pinoHttp } = await loggerParams(config, 2);
  // To standard error, loggerParams always names the stream beside the options.
  const [options, stream] = pinoHttp as [LoggerOptions, DestinationStream];
  const logger = pino(options, stream).child({ context: AUDIT_LOG_CONTEXT });
  return (event) => logger.info(auditLogFields(event), AUDIT_LOG_MESSAGE);
}
