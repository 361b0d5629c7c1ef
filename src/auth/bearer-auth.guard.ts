import {
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { withoutStackTrace } from '../common/errors/without-stack-trace.js';
import type { ErrorDetails } from '../common/filters/http-error.filter.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { BEARER_REALM } from './bearer.strategy.js';
import { IS_PUBLIC } from './decorators/public.decorator.js';
import { REQUIRED_SCOPES } from './decorators/requires-scopes.decorator.js';
import type { Principal } from './principal.js';
import type { Scope } from './scopes.js';

export type AuthenticatedRequest = FastifyRequest & { user: Principal };

/** What a route asks of a request's token. */
interface RouteRules {
  isPublic: boolean;
  required: Scope[];
}

/**
 * The global guard: every route needs a valid bearer token unless it is `@Public()`,
 * and the token must hold the route's `@RequiresScopes()`.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(
    private readonly reflector: Reflector,
    private readonly metrics: MetricsService,
  ) {
    super();
  }

  /**
   * A route's `@Public()` and `@RequiresScopes()`, read once per controller and handler:
   * decorators never change, and the metadata walk cost every request a few µs. Keyed
   * by both, as a handler a base class declares serves each subclass with its own.
   */
  private readonly rulesByClass = new WeakMap<Function, WeakMap<Function, RouteRules>>();

  private rulesOf(context: ExecutionContext): RouteRules {
    const [handler, controller] = [context.getHandler(), context.getClass()];
    let byHandler = this.rulesByClass.get(controller);
    if (!byHandler) this.rulesByClass.set(controller, (byHandler = new WeakMap()));
    let rules = byHandler.get(handler);
    if (!rules) {
      const targets = [handler, controller];
      rules = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) === true,
        required: this.reflector.getAllAndOverride<Scope[]>(REQUIRED_SCOPES, targets) ?? [],
      };
      byHandler.set(handler, rules);
    }
    return rules;
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const { isPublic, required } = this.rulesOf(context);
    if (isPublic) return true;
    await super.canActivate(context);
    const { user } = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const missing = required.filter((scope) => !user.scopes.includes(scope));
    if (missing.length > 0) {
      throw withoutStackTrace(
        () => new ForbiddenException(`this token lacks the scope ${missing.join(', ')}`),
      );
    }
    return true;
  }

  /**
   * passport-http-bearer also reads `access_token` from the query string and the body;
   * RFC 6750 discourages both (they end up in logs), so the strategy sees the header only.
   */
  override getRequest(context: ExecutionContext): Pick<FastifyRequest, 'headers'> {
    const { authorization } = context.switchToHttp().getRequest<FastifyRequest>().headers;
    return { headers: { authorization } };
  }

  override handleRequest<TUser = Principal>(
    error: unknown,
    principal: Principal | false,
    challenge: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error) throw error;
    if (!principal) {
      const presented = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
      this.metrics.recordAuthFailure(presented ? 'invalid' : 'missing');
      const details: ErrorDetails = {
        message: presented
          ? 'the bearer token is malformed, unknown, expired or revoked'
          : 'a bearer token is required: send Authorization: Bearer <token>',
        headers: {
          'WWW-Authenticate':
            typeof challenge === 'string' ? challenge : `Bearer realm="${BEARER_REALM}"`,
        },
      };
      throw withoutStackTrace(() => new UnauthorizedException(details));
    }
    context.switchToHttp().getRequest<AuthenticatedRequest>().user = principal;
    return principal as TUser;
  }
}
