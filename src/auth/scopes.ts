/**
 * What a token may do, named `<feature>:<action>`. Each feature module declares its own
 * (plants/plants.scopes.ts, say); src/app.scopes.ts gathers them for the token store.
 */
export type Scope = `${string}:${string}`;

export interface ScopeDeclaration {
  scope: Scope;
  /** `token create` without `--scopes` grants it. */
  grantedByDefault: boolean;
}

/** The scopes a token may be granted: every feature module's declarations. */
export class GrantableScopes {
  constructor(private readonly declarations: readonly ScopeDeclaration[]) {}

  get all(): Scope[] {
    return this.declarations.map(({ scope }) => scope);
  }

  get defaults(): Scope[] {
    return this.declarations.filter((each) => each.grantedByDefault).map(({ scope }) => scope);
  }

  includes(value: string): value is Scope {
    return this.declarations.some(({ scope }) => scope === value);
  }
}
