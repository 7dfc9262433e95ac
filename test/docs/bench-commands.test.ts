import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every bench command the README and docs/ show runs here as written, with BENCH_CHECK_ARGS=1: the
 * npm script exists, and the bench reads every flag the command gives (its parser is strict), then
 * stops before measuring (scripts/bench/harness/options.ts, benchArgs). A renamed script or flag
 * fails here instead of in a reader's terminal. What the runs measured is in docs/benchmarks.md
 * beside each command; measuring again is not a test (the machine is shared, see there).
 */
const ROOT = join(import.meta.dirname, '../..');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

/**
 * Each `npm run bench…` in a file: to the end of its inline code span (which may run over a line
 * break, as Markdown allows), or to the end of its line in a fenced code block or plain text.
 */
function benchCommands(text: string): string[] {
  const commands: string[] = [];
  for (let at = text.indexOf('npm run bench'); at !== -1; at = text.indexOf('npm run bench', at + 1)) {
    const paragraph = text.lastIndexOf('\n\n', at) + 1;
    const opening = /(`+)[^`]*$/.exec(text.slice(paragraph, at));
    const lineEnd = text.indexOf('\n', at) === -1 ? text.length : text.indexOf('\n', at);
    const fence = opening?.[1];
    const fenced =
      fence !== undefined && fence.length >= 3 && /(^|\n)$/.test(text.slice(0, paragraph + opening!.index));
    const end = fence && !fenced ? text.indexOf(fence, at) : -1;
    const command = end === -1 ? text.slice(at, lineEnd) : text.slice(at, end);
    commands.push(command.replace(/\s*\n\s*/g, ' ').trim());
  }
  return commands;
}

/** The words of a command as a POSIX shell splits them (single and double quotes; `[optional]` parts kept). */
function words(command: string): string[] {
  const out: string[] = [];
  const pattern = /'([^']*)'|"([^"]*)"|(\S+)/g;
  for (const match of command.matchAll(pattern)) out.push(match[1] ?? match[2] ?? match[3]!);
  return out.map((w) => w.replace(/^\[|\]$/g, '')).filter((w) => w !== '');
}

const found = DOCS.flatMap((file) =>
  benchCommands(readFileSync(join(ROOT, file), 'utf8')).map((command) => ({ file, command })),
);
const unique = [...new Map(found.map((f) => [f.command, f])).values()];

describe('bench commands in the docs', () => {
  it('finds the commands (the docs show at least one of each bench script)', () => {
    const scripts = new Set(unique.map((u) => words(u.command)[2]));
    for (const name of Object.keys(SCRIPTS).filter((s) => s === 'bench' || s.startsWith('bench:')))
      expect(scripts, `${name} is shown in the docs`).toContain(name);
  });

  it('splits a command as the shell does', () => {
    expect(words("npm run bench -- --round 6 --only 'graphql, `me`'")).toEqual([
      'npm',
      'run',
      'bench',
      '--',
      '--round',
      '6',
      '--only',
      'graphql, `me`',
    ]);
    expect(
      benchCommands('Run ``npm run bench -- --only `x` `` then `npm run bench:lists -- --db\n  postgres`.'),
    ).toEqual(['npm run bench -- --only `x`', 'npm run bench:lists -- --db postgres']);
    expect(benchCommands('```sh\nnpm run bench:money -- --round 4\n```\n')).toEqual([
      'npm run bench:money -- --round 4',
    ]);
  });

  it.each(unique.map((u) => [u.command, u.file] as const))('%s (%s)', (command, file) => {
    const [npm, run, script, ...rest] = words(command);
    expect([npm, run], `${file}: ${command}`).toEqual(['npm', 'run']);
    expect(SCRIPTS[script!], `${file}: npm script ${script} exists`).toBeDefined();
    const args = rest[0] === '--' ? rest.slice(1) : rest;
    const [runner, entry] = SCRIPTS[script!]!.split(' ');
    expect(runner).toBe('tsx');
    const result = spawnSync(process.execPath, ['--import', 'tsx', entry!, ...args], {
      cwd: ROOT,
      env: { ...process.env, BENCH_CHECK_ARGS: '1' },
      encoding: 'utf8',
    });
    expect(result.stderr, `${file}: ${command}`).toBe('');
    expect(result.stdout, `${file}: ${command}`).toContain('bench arguments ok');
    expect(result.status).toBe(0);
  });
});
