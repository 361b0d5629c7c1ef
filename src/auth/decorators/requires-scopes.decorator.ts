import { SetMetadata } from '@nestjs/common';
import type { Scope } from '../scopes.js';

export const REQUIRED_SCOPES = 'auth:requiredScopes';

/** The token must hold every one of these scopes, otherwise 403. */
export const RequiresScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);
