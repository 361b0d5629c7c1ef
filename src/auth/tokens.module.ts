import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { ApiToken } from './entities/api-token.entity.js';
import { GrantableScopes } from './scopes.js';
import { TokensService } from './tokens.service.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/**
 * A verified token is trusted for this long without asking the database again. Revocations
 * evict it at once; this only bounds how long a revocation nobody heard of goes unnoticed.
 */
export const VERIFIED_TOKEN_TTL_MS = 5_000;
/**
 * An unknown token is answered 401 without asking the database again for this long: a
 * client retrying a wrong token, or a flood of one, costs a query per second at most. A
 * token created meanwhile is accepted after this long at most.
 */
export const UNKNOWN_TOKEN_TTL_MS = 1_000;
/** Far more tokens than are in use at once, and still only a few MiB (each, for unknown ones). */
const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/**
 * The token store, as the service and the token CLI use it, granting the scopes the
 * feature modules declare (src/app.scopes.ts).
 */
@Module({
  imports: [TypeOrmModule.forFeature([ApiToken]), AuditModule],
  providers: [
    TokensService,
    {
      provide: VerifiedTokenCache,
      useFactory: () =>
        new VerifiedTokenCache(
          VERIFIED_TOKEN_TTL_MS,
          VERIFIED_TOKEN_CACHE_SIZE,
          UNKNOWN_TOKEN_TTL_MS,
        ),
    },
  ],
  exports: [TokensService, VerifiedTokenCache],
})
export class TokensModule {
  static forRoot(scopes: GrantableScopes): DynamicModule {
    return {
      module: TokensModule,
      providers: [{ provide: GrantableScopes, useValue: scopes }],
      exports: [GrantableScopes],
    };
  }
}
