import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SEED_DOCUMENT_URL } from '../support/openapi-contract.js';

const PUBLISHED_SEED = new URL('../../../shared/spec/plant-store.openapi.yaml', import.meta.url);

describe('the copy of the seed the contract tests use', () => {
  it.skipIf(!existsSync(PUBLISHED_SEED))('is the published seed, unchanged', () => {
    expect(readFileSync(SEED_DOCUMENT_URL, 'utf8')).toBe(readFileSync(PUBLISHED_SEED, 'utf8'));
  });
});
