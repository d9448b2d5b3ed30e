/**
 * The README and docs/ move as the code does: a link to a page that moved or a heading that was renamed is
 * found here, not by a newcomer. Links in code blocks are examples, not links, so they are left out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers.ts';

const PAGES = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The page's text outside fenced code blocks and inline code spans. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string): string =>
  heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string): Set<string> =>
  new Set(
    [
      ...readFileSync(file, 'utf8')
        .replace(/^```[\s\S]*?^```/gm, '')
        .matchAll(/^#{1,6} (.+)$/gm),
    ].map((m) => anchor(m[1] ?? '')),
  );

/** Every relative link target of a page (no scheme, not mail), as written. */
const relativeLinks = (text: string): string[] =>
  [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));

test('the README and docs/ link to more than a handful of pages, so the checks below check something', () => {
  const links = PAGES.flatMap((page) => relativeLinks(readFileSync(path.join(REPO_ROOT, page), 'utf8')));
  assert.ok(PAGES.includes('docs/cli.md') && PAGES.includes('docs/endpoints.md'), PAGES.join(', '));
  assert.ok(links.length > 50, `${links.length} links`);
});

test('every relative link in the README and docs/ points to a file or folder that exists', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const target of relativeLinks(readFileSync(path.join(REPO_ROOT, page), 'utf8'))) {
      const file = target.split('#')[0] ?? '';
      if (file !== '' && !existsSync(path.resolve(REPO_ROOT, path.dirname(page), decodeURI(file))))
        broken.push(`${page}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('every link to a heading in the README and docs/ names a heading that exists', () => {
  const broken: string[] = [];
  for (const page of PAGES) {
    for (const target of relativeLinks(readFileSync(path.join(REPO_ROOT, page), 'utf8'))) {
      const [file = '', hash] = target.split('#');
      if (hash === undefined) continue;
      const linked =
        file === '' ? path.join(REPO_ROOT, page) : path.resolve(REPO_ROOT, path.dirname(page), file);
      if (!linked.endsWith('.md') || !existsSync(linked)) continue;
      if (!anchorsOf(linked).has(hash)) broken.push(`${page}: ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});
