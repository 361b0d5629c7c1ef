import { resolve } from 'node:path';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { decimalDigitsToNumber } from '../common/validation/is-integer-between.decorator.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Over 16,000 requests a second per token: beyond that a limit is a typo, not a choice. */
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000;
const RATE_LIMIT_RANGE = 'RATE_LIMIT_PER_MINUTE must be a whole number from 0 (off) to 1000000';

/** The environment as the service reads it; every variable is checked at start. */
class EnvironmentVariables {
  @Transform(decimalDigitsToNumber)
  @IsInt({ message: 'PORT must be an integer from 0 to 65535' })
  @Min(0, { message: 'PORT must be an integer from 0 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 0 to 65535' })
  PORT = 3000;

  @IsString()
  @MinLength(1, { message: 'HOST must be a host name or address, not empty' })
  HOST = '0.0.0.0';

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/[^\s/]+(\/[^\s]*)?$/, {
    message: 'DATABASE_URL must be a postgres:// URL, like postgres://user:pass@host:5432/db',
  })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1, { message: 'DATA_DIR must be a directory path, not empty' })
  DATA_DIR = './data';

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  @Transform(decimalDigitsToNumber)
  @IsInt({ message: RATE_LIMIT_RANGE })
  @Min(0, { message: RATE_LIMIT_RANGE })
  @Max(MAX_RATE_LIMIT_PER_MINUTE, { message: RATE_LIMIT_RANGE })
  RATE_LIMIT_PER_MINUTE = 600;
}

/** The environment variables the service reads. */
export const CONFIG_VARIABLES = Object.keys(new EnvironmentVariables());

/**
 * The password of a URL-like value (`scheme://user:password@host`, or without the scheme)
 * as `***`, so that a rejected DATABASE_URL is never echoed with its secret. Up to the last
 * `@`: a password may hold `@`, `/` or spaces when the value is malformed.
 */
export function redactPassword(value: string): string {
  const scheme = /^[^:/@]*:\/\//.exec(value)?.[0] ?? '';
  return scheme + value.slice(scheme.length).replace(/^([^:@]*):.*@/s, '$1:***@');
}

/** Raised when the environment holds a value the service cannot run with. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Typed, validated configuration. It is a class so that Nest can inject it by type:
 * `constructor(private readonly config: AppConfig)`.
 */
export class AppConfig {
  readonly port: number;
  readonly host: string;
  /** Unset: the service runs its own embedded PostgreSQL in `dataDir`. */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  /** Requests per minute per token; 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number;

  private constructor(env: EnvironmentVariables) {
    this.port = env.PORT;
    this.host = env.HOST;
    this.databaseUrl = env.DATABASE_URL;
    this.dataDir = resolve(env.DATA_DIR);
    this.logLevel = env.LOG_LEVEL;
    this.rateLimitPerMinute = env.RATE_LIMIT_PER_MINUTE;
  }

  /** Reads the environment; throws one ConfigError naming the first wrong variable. */
  static fromEnvironment(environment: NodeJS.ProcessEnv = process.env): AppConfig {
    const present = Object.fromEntries(
      CONFIG_VARIABLES.flatMap((name) => (environment[name] ? [[name, environment[name]]] : [])),
    );
    const env = plainToInstance(EnvironmentVariables, present);
    const [error] = validateSync(env, { stopAtFirstError: true });
    if (error) {
      const reason = Object.values(error.constraints ?? {})[0];
      throw new ConfigError(
        `Invalid configuration: ${reason} (got ${JSON.stringify(redactPassword(String(error.value)))})`,
      );
    }
    return new AppConfig(env);
  }
}
