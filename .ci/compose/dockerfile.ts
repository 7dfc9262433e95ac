import { shellWords } from './shell-words.js';

/**
 * What a container of the image starts with, from the Dockerfile's final stage (the one
 * `docker build` without `--target` produces): its ENV, CMD and WORKDIR.
 */
export interface ImageSpec {
  env: Record<string, string>;
  cmd: string[];
  workdir: string;
}

/** Instructions with their continuation lines (`\` at the end) joined, comments and blank lines left out. */
function instructions(text: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || line === '') continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    out.push(pending + line);
    pending = '';
  }
  if (pending) out.push(pending);
  return out;
}

export function readImage(dockerfile: string): ImageSpec {
  const all = instructions(dockerfile);
  const lastFrom = all.findLastIndex((line) => /^FROM\s/i.test(line));
  if (lastFrom < 0) throw new Error('the Dockerfile has no FROM');
  const spec: ImageSpec = { env: {}, cmd: [], workdir: '/' };
  for (const line of all.slice(lastFrom + 1)) {
    const [instruction = '', ...rest] = line.split(/\s+/);
    const argument = line.slice(instruction.length).trim();
    switch (instruction.toUpperCase()) {
      case 'ENV': {
        const words = shellWords(argument);
        // `ENV KEY value` (the old form) or `ENV KEY=value …`.
        if (words.length >= 1 && !words[0]?.includes('=')) spec.env[words[0] as string] = rest.slice(1).join(' ');
        else
          for (const word of words) {
            const at = word.indexOf('=');
            spec.env[word.slice(0, at)] = word.slice(at + 1);
          }
        break;
      }
      case 'CMD':
        spec.cmd = argument.startsWith('[') ? JSON.parse(argument) : ['/bin/sh', '-c', argument];
        break;
      case 'WORKDIR':
        spec.workdir = argument;
        break;
    }
  }
  if (spec.cmd.length === 0) throw new Error("the Dockerfile's final stage has no CMD");
  return spec;
}

/**
 * The shell commands shown in a file's header (its leading comment lines): lines that run
 * `docker`, after any `NAME=value` assignments.
 */
export function headerCommands(text: string): string[] {
  const commands: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('#')) break;
    const body = line.replace(/^#\s*/, '');
    if (runsDocker(body)) commands.push(body);
  }
  return commands;
}

/** Whether a line, read as shell words, is `docker …` after any `NAME=value` assignments (prose is not). */
export function runsDocker(line: string): boolean {
  let words: string[];
  try {
    words = shellWords(line);
  } catch {
    return false;
  }
  const first = words.find((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
  return first === 'docker' && words.length > 1;
}
