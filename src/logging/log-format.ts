import type { AppConfig, LogFormat } from '../config/app-config.js';

/**
 * Readable lines for a person at a terminal, JSON lines for everything that reads them
 * back (pipes, files, containers, log collectors, the tests), unless LOG_FORMAT says
 * which. At LOG_LEVEL=silent nothing is written, so there is nothing to make readable.
 */
export function chooseLogFormat(
  { logFormat, logLevel }: Pick<AppConfig, 'logFormat' | 'logLevel'>,
  stdoutIsTerminal: boolean,
): LogFormat {
  if (logFormat) return logFormat;
  return stdoutIsTerminal && logLevel !== 'silent' ? 'pretty' : 'json';
}
