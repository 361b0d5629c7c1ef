import type { ScopeDeclaration } from '../auth/scopes.js';

/** Managing webhooks is never granted by default: a plants token cannot redirect plants elsewhere. */
export const WEBHOOKS_SCOPES: readonly ScopeDeclaration[] = [
  { scope: 'webhooks:manage', grantedByDefault: false },
];
