import type { ScopeDeclaration } from '../auth/scopes.js';

/** `plants:write` does not imply `plants:read`; a new token gets both unless told otherwise. */
export const PLANTS_SCOPES: readonly ScopeDeclaration[] = [
  { scope: 'plants:read', grantedByDefault: true },
  { scope: 'plants:write', grantedByDefault: true },
];
