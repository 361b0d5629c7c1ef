import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { AuthenticatedRequest } from '../auth/bearer-auth.guard.js';
import { type Actor, tokenActor } from './actor.js';

/**
 * The actor of an authenticated request, for a handler to hand to the service that
 * records what the request changes: the bearer token, by id and name.
 */
export const RequestActor = createParamDecorator((_: unknown, context: ExecutionContext): Actor =>
  tokenActor(context.switchToHttp().getRequest<AuthenticatedRequest>().user),
);
