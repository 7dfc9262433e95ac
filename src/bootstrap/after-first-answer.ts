import type { Server } from 'node:http';

/** What shutdown needs of background work that may not have started yet. */
export interface Stoppable {
  stop(graceMs: number): Promise<void>;
}

/**
 * Starts background work once the server has sent its first answer, or `graceMs` after listening
 * when no request comes first. The workers' first rounds (job claims, the relay, schedules, the
 * chain watch) are a burst of queries and of code run for the first time; begun at the moment of
 * listening, they queued in front of the first request (on the embedded database's one connection
 * most of all) and made the first answer of a warm start a second late on a busy machine. Jobs
 * enqueued meanwhile wait in the queue, which is durable.
 *
 * Returns the work as shutdown stops it: work that never started has nothing to stop.
 */
export function startAfterFirstAnswer<W extends Stoppable>(server: Server, graceMs: number, start: () => W): Stoppable {
  let work: W | undefined;
  let stopped = false;
  const begin = () => {
    clearTimeout(timer);
    server.off('request', onRequest);
    if (!work && !stopped) work = start();
  };
  const onRequest = (_request: unknown, response: NodeJS.EventEmitter) => {
    server.off('request', onRequest);
    // 'close' comes after 'finish', and also when the client went away before the answer.
    response.once('close', begin);
  };
  server.on('request', onRequest);
  const timer = setTimeout(begin, graceMs);
  return {
    async stop(stopGraceMs: number) {
      stopped = true;
      clearTimeout(timer);
      server.off('request', onRequest);
      await work?.stop(stopGraceMs);
    },
  };
}
