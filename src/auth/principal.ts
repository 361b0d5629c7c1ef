import type { Scope } from './scopes.js';

/** Who is calling: the token a request was authenticated with. */
export interface Principal {
  tokenId: string;
  tokenName: string;
  scopes: readonly Scope[];
}
