import { shellWords } from './shell-words.js';

/**
 * The `docker …` commands of the Dockerfile's and compose.yaml's headers, each read into what the
 * deployment check runs in its place (no Docker daemon on the CI machines):
 *
 *   build         `docker build -t <tag> .`: the build stage and the runtime directory (check-image.sh)
 *   run           `docker run [-e K=V] [--rm] [-p H:C] <tag> [command…]`: the command (else the image's
 *                 CMD) in the runtime directory with the image's ENV and the -e variables
 *   compose-up    `[K=V…] docker compose [-f <file>] up [--build]`: the file's services of this
 *                 image (compose.yaml without -f), in the order of their depends_on, with K=V as
 *                 the interpolation environment
 *   compose-exec  `docker compose [-f <file>] exec <service> command…`: the command in the runtime
 *                 directory with that service's environment
 *
 * A header command of any other form is refused, so a new one cannot go unchecked.
 */

export type HeaderCommand =
  | { kind: 'build'; line: string; tag: string }
  | {
      kind: 'run';
      line: string;
      image: string;
      env: [string, string][];
      ports: { host: number; container: number }[];
      remove: boolean;
      command: string[] | undefined;
    }
  | { kind: 'compose-up'; line: string; assignments: [string, string][]; file: string }
  | {
      kind: 'compose-exec';
      line: string;
      assignments: [string, string][];
      file: string;
      service: string;
      command: string[];
    };

export function readHeaderCommand(line: string): HeaderCommand {
  const words = shellWords(line);
  const assignments: [string, string][] = [];
  while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] as string)) {
    const word = words.shift() as string;
    const at = word.indexOf('=');
    assignments.push([word.slice(0, at), word.slice(at + 1)]);
  }
  const refuse = (why: string) => new Error(`no mapping for the header command \`${line}\`: ${why}`);
  if (words.shift() !== 'docker') throw refuse('not a docker command');
  const verb = words.shift();
  if (verb === 'build') {
    const tag = words[words.indexOf('-t') + 1];
    if (!words.includes('-t') || !tag || words.at(-1) !== '.') throw refuse('expected docker build -t <tag> .');
    if (assignments.length) throw refuse('variables before docker build');
    return { kind: 'build', line, tag };
  }
  if (verb === 'run') {
    if (assignments.length) throw refuse('variables before docker run (use -e)');
    const env: [string, string][] = [];
    const ports: { host: number; container: number }[] = [];
    let remove = false;
    while (words[0]?.startsWith('-')) {
      const flag = words.shift() as string;
      if (flag === '--rm') remove = true;
      else if (flag === '-e') {
        const pair = words.shift() ?? '';
        const at = pair.indexOf('=');
        if (at < 1) throw refuse(`-e ${pair}: expected NAME=value`);
        env.push([pair.slice(0, at), pair.slice(at + 1)]);
      } else if (flag === '-p') {
        const [host, container] = (words.shift() ?? '').split(':').map(Number);
        if (!host || !container) throw refuse('expected -p <host port>:<container port>');
        ports.push({ host, container });
      } else throw refuse(`the flag ${flag} has no mapping`);
    }
    const image = words.shift();
    if (!image) throw refuse('no image');
    return { kind: 'run', line, image, env, ports, remove, command: words.length ? words : undefined };
  }
  if (verb === 'compose') {
    let file = 'compose.yaml';
    if (words[0] === '-f') {
      words.shift();
      file = words.shift() ?? '';
      if (!/^[\w.-]+\.ya?ml$/.test(file)) throw refuse('expected -f <a compose file beside the Dockerfile>');
    }
    const sub = words.shift();
    if (sub === 'up') {
      if (words.some((w) => w !== '--build'))
        throw refuse(`docker compose up ${words.join(' ')}: only --build is mapped`);
      return { kind: 'compose-up', line, assignments, file };
    }
    if (sub === 'exec') {
      const service = words.shift();
      if (!service || service.startsWith('-') || words.length === 0) throw refuse('expected exec <service> <command…>');
      return { kind: 'compose-exec', line, assignments, file, service, command: words };
    }
  }
  throw refuse(`docker ${verb ?? ''} has no mapping`);
}
