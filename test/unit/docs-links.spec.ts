import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from '../support/markdown-anchors.js';

/** Every Markdown page a reader follows links through. */
const PAGES = [
  'README.md',
  'CHANGELOG.md',
  'bench/README.md',
  ...readdirSync('docs', { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

describe('links between the docs', () => {
  it('lead to a file that exists and, with an anchor, to one of its headings', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const [, target] of readFileSync(page, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor))
          broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
