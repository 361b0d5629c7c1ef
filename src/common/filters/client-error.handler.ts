import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from './http-error.filter.js';

/** What Node's HTTP parser reports, and how the client is told. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'the request headers are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'the request took too long to arrive' },
};
const NOT_HTTP = { status: 400, message: 'the request is not valid HTTP' };

/**
 * Errors Node's HTTP parser raises before Fastify or Nest see a request (oversized
 * headers, a slowloris time-out, bytes that are not HTTP): answered in the contract's
 * error shape too (Fastify's own answer has a string `error`), then the connection is
 * closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, message } = CLIENT_ERRORS[error.code ?? ''] ?? NOT_HTTP;
  const body = JSON.stringify({ error: status, message } satisfies ErrorBody);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Connection: close\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** What Fastify's router refuses before routing: a malformed URL, a too long parameter. */
const ROUTER_ERRORS: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL is not valid: a percent-encoded part of it does not decode',
  FST_ERR_MAX_PARAM_LENGTH: 'a path parameter is too long',
};

/**
 * Answers a URL the router cannot take with 400 in the contract's error shape (Fastify's
 * own answer leaks its error code, and is a 414 for a long parameter, which no route
 * documents: an id longer than 100 characters is no id).
 */
export function answerRouterError(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const body: ErrorBody = {
    error: 400,
    message: ROUTER_ERRORS[error.code] ?? 'the request is not valid',
  };
  void reply.code(400).type('application/json; charset=utf-8').send(body);
}
