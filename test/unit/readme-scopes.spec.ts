import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APP_SCOPES } from '../../src/app.scopes.js';

/** The README's Tokens section, where an operator learns what a token may be granted. */
const tokensSection = /^## Tokens\n([\s\S]*?)^## /m.exec(readFileSync('README.md', 'utf8'))![1];

describe("the README's scope list", () => {
  it('names every scope the modules declare, and those granted by default', () => {
    const listed = /scopes \(([^;]+);/.exec(tokensSection)![1];
    expect([...listed.matchAll(/`([\w-]+:[\w-]+)`/g)].map(([, scope]) => scope)).toEqual(
      APP_SCOPES.all,
    );
    expect(tokensSection).toContain(`default \`${APP_SCOPES.defaults.join(',')}\``);
  });
});
