import { readFileSync } from 'node:fs';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');

/** The anchors of a Markdown page's headings (those inside code blocks are not headings). */
export function anchorsOf(page: string): Set<string> {
  const text = readFileSync(page, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map(([, heading]) => anchorOf(heading)));
}
