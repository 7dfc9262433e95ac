/** Starts a readiness watch and returns: the process must end on its own, the watch's timer unref'd. */
import { DependencyHealth } from '../../src/health/dependency-health.js';
import { ReadinessWatch } from '../../src/health/readiness-watch.js';

const db = {
  execute: async () => {
    console.log('checked');
    return { rows: [{ read_only: 'off' }] };
  },
};
new ReadinessWatch(new DependencyHealth(db as never, { warn: () => undefined, info: () => undefined }), 10).start();
