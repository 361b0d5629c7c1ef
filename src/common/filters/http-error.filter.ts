import { STATUS_CODES } from 'node:http';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { lingerAfterAnswer } from '../http/lingering-close.js';
import { JsonBodyError } from '../json/json-codec.js';

/** The contract's error shape: `error` repeats the HTTP status. */
export interface ErrorBody {
  error: number;
  message: string;
}

/** What an HttpException's response may carry besides its message. */
export interface ErrorDetails {
  message: string | string[];
  /** Response headers that belong to this error, e.g. WWW-Authenticate or Retry-After. */
  headers?: Record<string, string>;
}

interface ShapedError {
  status: number;
  message: string;
  headers: Record<string, string>;
}

/** How an error raised below the HTTP layer (by the database, say) is answered. */
export interface ClassifiedError {
  status: number;
  message: string;
  headers?: Record<string, string>;
  /** Logged as a warning: expected, but worth an operator's eye (an outage, say). */
  warning?: string;
}

/**
 * Recognises the errors of one layer (src/database, src/shutdown): undefined for any
 * other. The filter itself knows only HTTP and JSON, so common/ depends on no layer.
 */
export type ErrorClassifier = (exception: unknown) => ClassifiedError | undefined;

/** Messages for the errors Fastify raises before a request reaches Nest. */
const FASTIFY_ERRORS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Content-Type must be application/json',
  FST_ERR_CTP_INVALID_TYPE: 'Content-Type must be application/json',
  FST_ERR_CTP_EMPTY_TYPE: 'Content-Type must be application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is too large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the request body is empty; send a JSON object',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the request body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the request body is not valid JSON',
};

/**
 * The one place where every error becomes a response: whichever layer raised it
 * (Fastify's parser, a guard, a pipe, a service, the database, a crash), the client gets
 * `application/json` `{ "error": <status>, "message": "…" }` and never a stack trace,
 * SQL or an internal name. What the other layers raise is answered as their
 * `classifiers` say (a database that does not answer is a 503, whoever ran into it).
 * Unexpected errors are logged here, once.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(HttpErrorFilter.name);

  constructor(private readonly classifiers: readonly ErrorClassifier[]) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const [request, reply] = [http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>()];
    const { status, message, headers } = this.shape(exception, request.id);
    // Refused while its body streams in: the client must get to read this answer.
    if (status === HttpStatus.PAYLOAD_TOO_LARGE) lingerAfterAnswer(request.raw, reply.raw);
    const body: ErrorBody = { error: status, message };
    reply.status(status).headers(headers).type('application/json; charset=utf-8').send(body);
  }

  /** The answer to `exception`; what the operator should see is logged with the request's id. */
  private shape(exception: unknown, requestId: string): ShapedError {
    const fastifyError = clientErrorFromFastify(exception);
    if (fastifyError) {
      const { statusCode: status, code } = fastifyError;
      return { status, message: FASTIFY_ERRORS[code] ?? describeStatus(status), headers: {} };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status >= 500) this.logger.error({ requestId, err: exception }, exception.message);
      return { status, ...describeHttpException(exception, status) };
    }
    if (exception instanceof JsonBodyError) {
      return { status: HttpStatus.BAD_REQUEST, message: exception.message, headers: {} };
    }
    for (const classify of this.classifiers) {
      const classified = classify(exception);
      if (classified === undefined) continue;
      if (classified.warning !== undefined) this.logger.warn({ requestId }, classified.warning);
      const { status, message, headers = {} } = classified;
      return { status, message, headers };
    }
    this.logger.error(
      { requestId, err: exception },
      exception instanceof Error ? exception.message : String(exception),
    );
    return {
      status: HttpStatus.INTERNAL_SERVER_ERROR,
      message: 'internal server error',
      headers: {},
    };
  }
}

interface FastifyClientError {
  code: string;
  statusCode: number;
}

/** A 4xx raised by Fastify itself (Nest hands it over wrapped in an HttpException). */
function clientErrorFromFastify(exception: unknown): FastifyClientError | undefined {
  const candidate = (exception instanceof HttpException ? exception.cause : exception) as
    Partial<FastifyClientError> | undefined;
  const { code, statusCode } = candidate ?? {};
  return typeof code === 'string' &&
    code.startsWith('FST_') &&
    statusCode! >= 400 &&
    statusCode! < 500
    ? { code, statusCode: statusCode! }
    : undefined;
}

function describeStatus(status: number): string {
  return (STATUS_CODES[status] ?? 'error').toLowerCase();
}

function describeHttpException(
  exception: HttpException,
  status: number,
): Omit<ShapedError, 'status'> {
  const response = exception.getResponse() as string | Partial<ErrorDetails>;
  const raw = typeof response === 'string' ? response : response.message;
  const message =
    status >= 500
      ? describeStatus(status)
      : Array.isArray(raw)
        ? raw.join('; ')
        : (raw ?? describeStatus(status));
  const headers = typeof response === 'object' ? { ...response.headers } : {};
  if (status === HttpStatus.UNAUTHORIZED)
    headers['WWW-Authenticate'] ??= 'Bearer realm="plant-store"';
  return { message, headers };
}
