import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PinoLogger } from 'nestjs-pino';
import type { AuthenticatedRequest } from '../auth/bearer-auth.guard.js';
import {
  CLIENT_CLOSED_REQUEST,
  observeRequests,
  recordedStatus,
  routePattern,
} from '../common/http/request-observer.js';

/**
 * One line per request: request id, method, route pattern, path (never the query
 * string, where a careless client might put a token), status, duration, the client's
 * address and, once the bearer guard has verified it, the token's id and name (never its
 * secret). The address is the socket's peer, or the one X-Forwarded-For names when the
 * peer is a proxy TRUST_PROXY lists (see createHttpAdapter). A request whose connection
 * closed before the service answered it is logged as abandoned: status 499, and the time
 * until it closed.
 */
@Injectable()
export class RequestLogService implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    observeRequests(fastify, { finished: (request, reply) => this.log(request, reply) });
  }

  private log(request: FastifyRequest, reply: FastifyReply): void {
    const status = recordedStatus(reply);
    const abandoned = status === CLIENT_CLOSED_REQUEST;
    const level = status >= 500 ? 'error' : 'info';
    // Runs for every request: nothing is built for a line the level would drop.
    if (!PinoLogger.root.isLevelEnabled(level)) return;
    // Set by the bearer guard once it has verified the token.
    const { user } = request as Partial<AuthenticatedRequest>;
    const line = {
      requestId: request.id,
      method: request.method,
      route: routePattern(request),
      path: request.url.split('?', 1)[0],
      status,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
      clientAddress: request.ip,
      ...(user && { tokenId: user.tokenId, tokenName: user.tokenName }),
      ...(abandoned && { aborted: true }),
    };
    PinoLogger.root[level](line, abandoned ? 'request abandoned' : 'request completed');
  }
}
