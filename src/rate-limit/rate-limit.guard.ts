import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerException, ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import type { Principal } from '../auth/principal.js';
import { withoutStackTrace } from '../common/errors/without-stack-trace.js';

const ALLOWED = Promise.resolve(true);

/**
 * Requests per minute per token; a request without one (a public route) counts for its
 * client address (`request.ip`: a trusted proxy's X-Forwarded-For, see TRUST_PROXY). Runs after the bearer guard, which has set `request.user` by then.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override async getTracker(request: { user?: Principal }): Promise<string> {
    return request.user
      ? `token:${request.user.tokenId}`
      : `address:${await super.getTracker(request)}`;
  }

  /**
   * With the limit off (RATE_LIMIT_PER_MINUTE=0, which `skipIf` says of every request),
   * allowed at once: the throttler would first read five pieces of the route's metadata.
   */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    return this.commonOptions.skipIf?.(context) ? ALLOWED : super.canActivate(context);
  }

  /** One budget per token for the whole API, not one per route. */
  protected override generateKey(_context: ExecutionContext, tracker: string, name: string) {
    return `${name}:${tracker}`;
  }

  /** A flood of requests over the limit is answered without capturing a stack each. */
  protected override async throwThrottlingException(
    context: ExecutionContext,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    const message = await this.getErrorMessage(context, detail);
    throw withoutStackTrace(() => new ThrottlerException(message));
  }
}
