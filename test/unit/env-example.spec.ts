import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppConfig, CONFIG_VARIABLES } from '../../src/config/app-config.js';

/** `NAME=value` lines of the repository's .env.example; comments and blank lines skipped. */
function envExample(): Record<string, string> {
  const text = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('.env.example', () => {
  it('lists every variable the configuration reads, and no other', () => {
    expect(Object.keys(envExample()).sort()).toEqual([...CONFIG_VARIABLES].sort());
  });

  it('gives each its default', () => {
    expect(AppConfig.fromEnvironment(envExample())).toEqual(AppConfig.fromEnvironment({}));
  });
});
