import { isIP } from 'node:net';
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
  ValidateBy,
  validateSync,
} from 'class-validator';
import { parseDuration } from '../common/duration/duration.js';
import {
  decimalDigitsToNumber,
  IsIntegerBetween,
} from '../common/validation/is-integer-between.decorator.js';
import { parseSecretKeys, SECRET_KEYS_FORMAT, type SecretKey } from './secret-keys.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Over 16,000 requests a second per token: beyond that a limit is a typo, not a choice. */
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000;
const RATE_LIMIT_RANGE = 'RATE_LIMIT_PER_MINUTE must be a whole number from 0 (off) to 1000000';

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * One connection LISTENs (token revocations, webhook events) and token lookups may hold 2 at once
 * (src/auth/tokens.service.ts): below 4, a flood of made-up tokens could leave no
 * connection for the plants. PostgreSQL's default `max_connections` is 100.
 */
const DATABASE_POOL_SIZE_RANGE = [4, 100] as const;
/** Under 100 ms a healthy but busy database would look down; over a minute a stuck one would hang requests. */
const DATABASE_CONNECT_TIMEOUT_RANGE_MS = [100, 60_000] as const;
const DATABASE_STATEMENT_TIMEOUT_RANGE_MS = [100, 300_000] as const;
/** Under 100 ms a migration would give up behind any write; over a minute, traffic queued behind its wait would time out. */
const MIGRATION_LOCK_TIMEOUT_RANGE_MS = [100, 60_000] as const;
const SHUTDOWN_DELAY_RANGE_MS = [0, 15_000] as const;
/** Long enough for a receiver across the world; short enough that a stuck one costs little. */
const WEBHOOK_TIMEOUT_RANGE_MS = [100, 30_000] as const;
/** Tests retry within milliseconds; an hour's first wait would make the last one months away. */
const WEBHOOK_RETRY_BASE_RANGE_MS = [10, 3_600_000] as const;
const WEBHOOK_MAX_ATTEMPTS_RANGE = [1, 30] as const;
const WEBHOOK_POLL_INTERVAL_RANGE_MS = [10, 60_000] as const;
/** At most the attempts a process makes at once (MAX_IN_FLIGHT in the delivery worker). */
const WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION_RANGE = [1, 128] as const;
/** 0: never; at most 30 days (a receiver failing longer has surely been forgotten). */
const WEBHOOK_DISABLE_AFTER_FAILING_RANGE_MS = [0, 2_592_000_000] as const;
/** Keeps delivered and failed webhook deliveries for good: nothing is removed. */
export const KEEP_FOREVER = 'forever';
/**
 * At least a second, so that a sweep that finds nothing costs the database nothing worth
 * counting; at most a day, so that what expires is gone within a day of expiring.
 */
const RETENTION_SWEEP_INTERVAL_RANGE_MS = [1_000, 86_400_000] as const;
/** Below 10 ms a busy network would look frozen; over 5 s a frozen Redis would hold requests. */
const REDIS_COMMAND_TIMEOUT_RANGE_MS = [10, 5_000] as const;

/** Comma-separated entries, blanks ignored: `a, b,` is `a` and `b`. */
function commaSeparated(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** An exact browser origin: scheme, host and port, nothing after them (no `*`, no path). */
function isOrigin(entry: string): boolean {
  try {
    return new URL(entry).origin === entry;
  } catch {
    return false;
  }
}

/** An IPv4 or IPv6 address, or a CIDR range of either (`10.0.0.0/8`, `fd00::/8`). */
function isAddressRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/** A host name (`hooks.example.com`, `localhost`) or an IPv4 or IPv6 address. */
function isHostOrAddress(entry: string): boolean {
  return (
    isIP(entry) !== 0 ||
    /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)
  );
}

/** A comma-separated list, possibly empty, each of whose entries passes `isEntry`. */
function IsListOf(isEntry: (entry: string) => boolean, message: string): PropertyDecorator {
  return ValidateBy({
    name: 'isListOf',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && commaSeparated(value).every(isEntry),
      defaultMessage: () => message,
    },
  });
}

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

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/[^\s/]+(\/[^\s]*)?$/, {
    message:
      'DATABASE_DIRECT_URL must be a postgres:// URL, like postgres://user:pass@host:5432/db',
  })
  DATABASE_DIRECT_URL?: string;

  @IsOptional()
  @Matches(/^postgres(ql)?:\/\/[^\s/]+(\/[^\s]*)?$/, {
    message:
      'DATABASE_MIGRATION_URL must be a postgres:// URL, like postgres://owner:pass@host:5432/db',
  })
  DATABASE_MIGRATION_URL?: string;

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

  @IsOptional()
  @IsIn(LOG_FORMATS, { message: `LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')}, or unset` })
  LOG_FORMAT?: LogFormat;

  @IsListOf(
    isOrigin,
    'CORS_ORIGINS must be a comma-separated list of exact origins like https://app.example.com (scheme, host and port; no path, no *)',
  )
  CORS_ORIGINS = '';

  @IsListOf(
    isAddressRange,
    'TRUST_PROXY must be a comma-separated list of proxy addresses or CIDR ranges, like 10.0.0.0/8,127.0.0.1',
  )
  TRUST_PROXY = '';

  /**
   * Two cores run two statements at a time; a few more connections keep them busy while
   * the others' results travel. Measured on 2 cores, reads stop gaining at 6 connections;
   * creates need only 2 (they are batched, see PlantsRepository); one more is held by the
   * token revocation listener.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...DATABASE_POOL_SIZE_RANGE)
  DATABASE_POOL_SIZE = 7;

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...DATABASE_CONNECT_TIMEOUT_RANGE_MS)
  DATABASE_CONNECT_TIMEOUT_MS = 3_000;

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...DATABASE_STATEMENT_TIMEOUT_RANGE_MS)
  DATABASE_STATEMENT_TIMEOUT_MS = 5_000;

  @IsIn(['true', 'false'], { message: 'MIGRATIONS_AT_START must be true or false' })
  MIGRATIONS_AT_START = 'true';

  /**
   * While a migration waits for a table's lock, the requests behind it wait too: 5 s
   * stays within the clients' statement time-out, and a migration giving up is rerun.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...MIGRATION_LOCK_TIMEOUT_RANGE_MS)
  MIGRATION_LOCK_TIMEOUT_MS = 5_000;

  @IsOptional()
  @Matches(/^rediss?:\/\/[^\s]*$/, {
    message: 'REDIS_URL must be a redis:// or rediss:// URL, like redis://127.0.0.1:6379/0',
  })
  REDIS_URL?: string;

  /**
   * A count in Redis takes a millisecond or two on a LAN; 100 ms is far above that (no
   * false alarms from a busy Redis or network), and the most a request waits for a frozen
   * one before it is counted in memory, once: later requests go straight to memory.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...REDIS_COMMAND_TIMEOUT_RANGE_MS)
  REDIS_COMMAND_TIMEOUT_MS = 100;

  /**
   * Within the shutdown's 30 s limit, with the 10 s drain. Off by default: run by hand,
   * no balancer needs telling, and Ctrl-C should stop at once.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...SHUTDOWN_DELAY_RANGE_MS)
  SHUTDOWN_DELAY_MS = 0;

  @IsListOf(
    isHostOrAddress,
    'WEBHOOK_ALLOWED_HOSTS must be a comma-separated list of host names or IP addresses, like hooks.internal,10.0.0.7',
  )
  WEBHOOK_ALLOWED_HOSTS = '';

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_TIMEOUT_RANGE_MS)
  WEBHOOK_TIMEOUT_MS = 5_000;

  /**
   * The wait after a first failed attempt; each next one is 3 times longer (with jitter):
   * 10 s and 10 attempts spread them over about a day.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_RETRY_BASE_RANGE_MS)
  WEBHOOK_RETRY_BASE_MS = 10_000;

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_MAX_ATTEMPTS_RANGE)
  WEBHOOK_MAX_ATTEMPTS = 10;

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_POLL_INTERVAL_RANGE_MS)
  WEBHOOK_POLL_INTERVAL_MS = 1_000;

  /** `false` leaves the worker to its poll: a switch should notifications ever misbehave. */
  @IsIn(['true', 'false'], { message: 'WEBHOOK_LISTEN must be true or false' })
  WEBHOOK_LISTEN = 'true';

  /**
   * `false` for operators who keep trace ids inside: the attempt is still traced, but its
   * `traceparent` does not go to the receiver.
   */
  @IsIn(['true', 'false'], { message: 'WEBHOOK_SEND_TRACE_CONTEXT must be true or false' })
  WEBHOOK_SEND_TRACE_CONTEXT = 'true';

  /**
   * 16 of a process's 128 attempt slots: a receiver that answers in 50 ms still gets 320
   * deliveries a second from each process (8 kept up with a fast burst of creates only
   * on a quiet machine), and 7 receivers that never answer leave the others 16 slots.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION_RANGE)
  WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION = 16;

  /**
   * Five days, as Svix does: longer than any attempt schedule (10 attempts take about 27
   * hours), so a receiver down over a long weekend is retried, not dropped.
   */
  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...WEBHOOK_DISABLE_AFTER_FAILING_RANGE_MS)
  WEBHOOK_DISABLE_AFTER_FAILING_MS = 432_000_000;

  /**
   * 30 days, as Stripe lists its events (Svix keeps payloads 30 to 90 days): a month to
   * redeliver what failed, after which a delivery is history the receiver has.
   */
  @ValidateBy({
    name: 'isRetention',
    validator: {
      validate: (value: unknown) =>
        value === KEEP_FOREVER || (typeof value === 'string' && parseDuration(value) !== undefined),
      defaultMessage: () =>
        `WEBHOOK_DELIVERY_RETENTION must be a duration like 30d, 12h or 10m (a whole number and s, m, h or d), or ${KEEP_FOREVER}`,
    },
  })
  WEBHOOK_DELIVERY_RETENTION = '30d';

  @Transform(decimalDigitsToNumber)
  @IsIntegerBetween(...RETENTION_SWEEP_INTERVAL_RANGE_MS)
  RETENTION_SWEEP_INTERVAL_MS = 3_600_000;

  /**
   * Unset: the embedded database's key file (<DATA_DIR>/webhook-secret.key); with
   * DATABASE_URL it must be set (src/webhooks/secrets/webhook-secret-keyring.ts).
   */
  @IsOptional()
  @ValidateBy({
    name: 'isSecretKeyList',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && (parseSecretKeys(value)?.length ?? 0) > 0,
      defaultMessage: () => `WEBHOOK_SECRET_KEYS must be ${SECRET_KEYS_FORMAT}`,
    },
  })
  WEBHOOK_SECRET_KEYS?: string;
}

/** Variables whose values are keys: never written back, even when malformed. */
const SECRET_VARIABLES = new Set(['WEBHOOK_SECRET_KEYS']);

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
  /**
   * Set when `databaseUrl` goes through a transaction pooler (PgBouncer): the same
   * database without it, for what needs a session of its own (see session-connection.ts).
   */
  readonly databaseDirectUrl: string | undefined;
  /**
   * The same database as the tables' owner, for what changes the schema or erases rows:
   * migrations, restore, `webhook-secrets re-encrypt`, `audit -- archive`. Unset: the
   * role of DATABASE_URL does all of it (docs/operations/security.md, "Database roles").
   */
  readonly databaseMigrationUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  /** Requests per minute per token; 0 turns rate limiting off. */
  readonly rateLimitPerMinute: number;
  /** Unset: pretty in a terminal, JSON elsewhere (see src/logging/log-format.ts). */
  readonly logFormat: LogFormat | undefined;
  /** Browser origins allowed to call the API; empty: no CORS headers at all. */
  readonly corsOrigins: string[];
  /** Proxies whose `X-Forwarded-For` names the client; empty: the peer is the client. */
  readonly trustedProxies: string[];
  readonly databasePoolSize: number;
  /** Opening a connection, or waiting for a free one in the pool. */
  readonly databaseConnectTimeoutMs: number;
  /** One SQL statement, enforced by PostgreSQL. */
  readonly databaseStatementTimeoutMs: number;
  /** false: the deployment applies migrations as a job (`npm run migration:run`). */
  readonly migrationsAtStart: boolean;
  /** The longest a migration waits for a lock (`lock_timeout`) before it fails, undone. */
  readonly migrationLockTimeoutMs: number;
  /** Unset: each process counts the rate limit in its own memory. */
  readonly redisUrl: string | undefined;
  /** How long a request waits for Redis's count before it counts in memory instead. */
  readonly redisCommandTimeoutMs: number;
  /** After SIGTERM, how long readiness answers 503 before the listener closes. */
  readonly shutdownDelayMs: number;
  /** Receiver hosts or addresses allowed although private, loopback or link-local. */
  readonly webhookAllowedHosts: string[];
  /** One delivery attempt, connection to last byte. */
  readonly webhookTimeoutMs: number;
  /** The wait after the first failed attempt; each next one is 3 times longer. */
  readonly webhookRetryBaseMs: number;
  /** Attempts per delivery, the first included; then it is marked failed. */
  readonly webhookMaxAttempts: number;
  /** How often each process looks for deliveries that are due. */
  readonly webhookPollIntervalMs: number;
  /** Workers wake at once when an event commits (LISTEN), besides polling. */
  readonly webhookListen: boolean;
  /** A delivery carries its attempt's `traceparent` to the receiver, when traced. */
  readonly webhookSendTraceContext: boolean;
  /** Attempts to one subscription a process makes at once. */
  readonly webhookMaxInFlightPerSubscription: number;
  /** A subscription whose every attempt failed for this long is disabled; 0: never. */
  readonly webhookDisableAfterFailingMs: number;
  /**
   * The keys webhook secrets are encrypted with, the first encrypting, all decrypting;
   * empty when unset.
   */
  readonly webhookSecretKeys: readonly SecretKey[];
  /**
   * How long delivered and failed webhook deliveries are kept, from their plant's
   * creation; null: forever. Pending ones are kept whatever their age.
   */
  readonly webhookDeliveryRetentionMs: number | null;
  /** How often each process sweeps away what has outlived its retention. */
  readonly retentionSweepIntervalMs: number;

  private constructor(env: EnvironmentVariables) {
    this.port = env.PORT;
    this.host = env.HOST;
    this.databaseUrl = env.DATABASE_URL;
    this.databaseDirectUrl = env.DATABASE_DIRECT_URL;
    this.databaseMigrationUrl = env.DATABASE_MIGRATION_URL;
    this.dataDir = resolve(env.DATA_DIR);
    this.logLevel = env.LOG_LEVEL;
    this.rateLimitPerMinute = env.RATE_LIMIT_PER_MINUTE;
    this.logFormat = env.LOG_FORMAT;
    this.corsOrigins = commaSeparated(env.CORS_ORIGINS);
    this.trustedProxies = commaSeparated(env.TRUST_PROXY);
    this.databasePoolSize = env.DATABASE_POOL_SIZE;
    this.databaseConnectTimeoutMs = env.DATABASE_CONNECT_TIMEOUT_MS;
    this.databaseStatementTimeoutMs = env.DATABASE_STATEMENT_TIMEOUT_MS;
    this.migrationsAtStart = env.MIGRATIONS_AT_START === 'true';
    this.migrationLockTimeoutMs = env.MIGRATION_LOCK_TIMEOUT_MS;
    this.shutdownDelayMs = env.SHUTDOWN_DELAY_MS;
    this.redisUrl = env.REDIS_URL;
    this.redisCommandTimeoutMs = env.REDIS_COMMAND_TIMEOUT_MS;
    this.webhookAllowedHosts = commaSeparated(env.WEBHOOK_ALLOWED_HOSTS);
    this.webhookTimeoutMs = env.WEBHOOK_TIMEOUT_MS;
    this.webhookRetryBaseMs = env.WEBHOOK_RETRY_BASE_MS;
    this.webhookMaxAttempts = env.WEBHOOK_MAX_ATTEMPTS;
    this.webhookPollIntervalMs = env.WEBHOOK_POLL_INTERVAL_MS;
    this.webhookListen = env.WEBHOOK_LISTEN === 'true';
    this.webhookSendTraceContext = env.WEBHOOK_SEND_TRACE_CONTEXT === 'true';
    this.webhookMaxInFlightPerSubscription = env.WEBHOOK_MAX_IN_FLIGHT_PER_SUBSCRIPTION;
    this.webhookDisableAfterFailingMs = env.WEBHOOK_DISABLE_AFTER_FAILING_MS;
    this.webhookSecretKeys = parseSecretKeys(env.WEBHOOK_SECRET_KEYS ?? '') ?? [];
    this.webhookDeliveryRetentionMs =
      env.WEBHOOK_DELIVERY_RETENTION === KEEP_FOREVER
        ? null
        : parseDuration(env.WEBHOOK_DELIVERY_RETENTION)!;
    this.retentionSweepIntervalMs = env.RETENTION_SWEEP_INTERVAL_MS;
  }

  /**
   * DATABASE_URL goes through a transaction pooler: no named prepared statements and no
   * session settings on its connections (see session-connection.ts for the rest).
   */
  get throughTransactionPooler(): boolean {
    return this.databaseDirectUrl !== undefined;
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
      // A key is never echoed, not even a malformed one: it may be one typo from the real key.
      const got = SECRET_VARIABLES.has(error.property)
        ? 'its value not shown'
        : `got ${JSON.stringify(redactPassword(String(error.value)))}`;
      throw new ConfigError(`Invalid configuration: ${reason} (${got})`);
    }
    if (env.DATABASE_DIRECT_URL !== undefined && env.DATABASE_URL === undefined) {
      throw new ConfigError(
        'Invalid configuration: DATABASE_DIRECT_URL goes with a DATABASE_URL through a pooler; set DATABASE_URL too',
      );
    }
    if (env.DATABASE_MIGRATION_URL !== undefined && env.DATABASE_URL === undefined) {
      throw new ConfigError(
        "Invalid configuration: DATABASE_MIGRATION_URL is the owner's URL for DATABASE_URL's database; set DATABASE_URL too (the embedded database makes both roles itself)",
      );
    }
    return new AppConfig(env);
  }
}
