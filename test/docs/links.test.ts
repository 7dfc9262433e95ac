import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Every relative link in the project's Markdown resolves: the file (or folder) exists inside the
 * repository, and a `#fragment` names a heading of the target as GitHub slugs it. Links with a
 * scheme (https:, mailto:) are left alone: CI is offline.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const markdown = new MarkdownIt({ html: true });

/** The Markdown files the docs consist of: README, ARCHITECTURE, docs/**, and folder READMEs under src/. */
function documentationFiles(root: string): string[] {
  const files = ['README.md', 'ARCHITECTURE.md'].map((name) => join(root, name));
  for (const [folder, keep] of [
    ['docs', (name: string) => name.endsWith('.md')],
    ['src', (name: string) => name.endsWith(`${sep}README.md`) || name === 'README.md'],
  ] as const) {
    const base = join(root, folder);
    if (!existsSync(base)) continue;
    for (const name of readdirSync(base, { recursive: true, encoding: 'utf8' })) {
      if (keep(name)) files.push(join(base, name));
    }
  }
  return files.sort();
}

interface Link {
  href: string;
  line: number;
}

/** Link and image targets, from the parsed document (so code spans and fenced blocks are not read as links). */
function linksOf(source: string): Link[] {
  const links: Link[] = [];
  const visit = (tokens: Token[], first: number) => {
    let line = first;
    for (const token of tokens) {
      if (token.map) line = token.map[0] + 1;
      if (token.type === 'link_open') links.push({ href: token.attrGet('href') ?? '', line });
      if (token.type === 'image') links.push({ href: token.attrGet('src') ?? '', line });
      if (token.children) visit(token.children, line);
      // Inside a paragraph, a line break is the only way to know the line a link is on.
      if (token.type === 'softbreak' || token.type === 'hardbreak') line += 1;
    }
  };
  visit(markdown.parse(source, {}), 1);
  return links;
}

/** The anchors GitHub gives a document's headings (duplicates get -1, -2, … as on GitHub). */
function anchorsOf(source: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  const tokens = markdown.parse(source, {});
  tokens.forEach((token, index) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[index + 1];
    const text = (inline?.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    anchors.add(slugger.slug(text));
  });
  return anchors;
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:|^\/\//i;
const CODE_LINE_ANCHOR = /^L\d+(-L\d+)?$/;

/** Broken links of the given files, as "file:line → href: reason", paths relative to root. */
function brokenLinks(root: string, files: string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let set = anchorCache.get(file);
    if (!set) {
      set = anchorsOf(readFileSync(file, 'utf8'));
      anchorCache.set(file, set);
    }
    return set;
  };
  const broken: string[] = [];
  for (const file of files) {
    const where = relative(root, file);
    if (!existsSync(file)) {
      broken.push(`${where}: the file itself is missing`);
      continue;
    }
    for (const { href, line } of linksOf(readFileSync(file, 'utf8'))) {
      const fail = (reason: string) => broken.push(`${where}:${line} → ${href}: ${reason}`);
      if (href === '') {
        fail('empty link');
        continue;
      }
      if (EXTERNAL.test(href)) continue;
      const hash = href.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? href : href.slice(0, hash));
      const fragment = hash === -1 ? undefined : decodeURIComponent(href.slice(hash + 1));
      if (pathPart.startsWith('/')) {
        fail('absolute path (use a path relative to this file)');
        continue;
      }
      const target = pathPart === '' ? file : resolve(dirname(file), pathPart);
      if (relative(root, target).startsWith('..')) {
        fail('points outside the repository');
        continue;
      }
      if (!existsSync(target)) {
        fail('no such file');
        continue;
      }
      if (fragment === undefined) continue;
      if (statSync(target).isDirectory()) {
        fail('a folder has no headings');
      } else if (target.endsWith('.md')) {
        if (!anchors(target).has(fragment)) fail(`no heading with anchor #${fragment} in ${relative(root, target)}`);
      } else if (!CODE_LINE_ANCHOR.test(fragment)) {
        fail('only #L<n> line anchors can point into a non-Markdown file');
      }
    }
  }
  return broken;
}

describe('documentation links', () => {
  it('every relative link and #anchor in README, ARCHITECTURE, docs/ and src/**/README.md resolves', () => {
    const files = documentationFiles(ROOT);
    expect(files.length).toBeGreaterThan(10);
    expect(brokenLinks(ROOT, files)).toEqual([]);
  });

  it("the README's map links every page of docs/ and ARCHITECTURE.md", () => {
    const linked = new Set(
      linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8'))
        .filter(({ href }) => !EXTERNAL.test(href))
        .map(({ href }) => resolve(ROOT, decodeURIComponent(href.split('#')[0]!))),
    );
    const pages = [
      join(ROOT, 'ARCHITECTURE.md'),
      ...documentationFiles(ROOT).filter((f) => f.includes(`${sep}docs${sep}`)),
    ];
    expect(pages.filter((page) => !linked.has(page)).map((page) => relative(ROOT, page))).toEqual([]);
  });

  describe('the checker', () => {
    const dir = mkdtempSync(join(tmpdir(), 'doc-links-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reports missing files, missing anchors and links outside the repository, and accepts good ones', () => {
      writeFileSync(
        join(dir, 'target.md'),
        '# Target\n\n## Events and jobs\n\n## Solana: balances, transfers\n\n## `code` heading\n\n## Twice\n\n## Twice\n',
      );
      writeFileSync(join(dir, 'code.ts'), 'export {};\n');
      writeFileSync(
        join(dir, 'README.md'),
        [
          '# Doc',
          '',
          '## Own heading',
          '',
          '[ok](target.md) [ok](target.md#events-and-jobs) [ok](target.md#solana-balances-transfers)',
          '[ok](target.md#code-heading) [ok](target.md#twice-1) [ok](#own-heading) [ok](code.ts#L1)',
          '[ok](https://example.com/missing) `[not a link](nowhere.md)`',
          '',
          '```md',
          '[not a link either](nowhere.md)',
          '```',
          '',
          '[bad file](missing.md)',
          '[bad anchor](target.md#events-jobs)',
          '[bad own anchor](#nope)',
          '[outside](../../etc/passwd)',
          '[bad code anchor](code.ts#top)',
        ].join('\n'),
      );
      const broken = brokenLinks(dir, [join(dir, 'README.md')]);
      expect(broken).toEqual([
        'README.md:13 → missing.md: no such file',
        'README.md:14 → target.md#events-jobs: no heading with anchor #events-jobs in target.md',
        'README.md:15 → #nope: no heading with anchor #nope in README.md',
        expect.stringMatching(
          /^README\.md:16 → \.\.\/\.\.\/etc\/passwd: (points outside the repository|no such file)$/,
        ),
        'README.md:17 → code.ts#top: only #L<n> line anchors can point into a non-Markdown file',
      ]);
    });
  });
});
