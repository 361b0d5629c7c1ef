import { GrantableScopes } from './auth/scopes.js';
import { PLANTS_SCOPES } from './plants/plants.scopes.js';
import { WEBHOOKS_SCOPES } from './webhooks/webhooks.scopes.js';

/** Every scope a token may be granted: each feature module's own, registered here. */
export const APP_SCOPES = new GrantableScopes([...PLANTS_SCOPES, ...WEBHOOKS_SCOPES]);
