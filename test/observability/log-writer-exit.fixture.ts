/** Logs 1,000 lines through the gateway's stdout writer and exits without waiting for them. */
import pino from 'pino';
import { batchedStdout } from '../../src/observability/log-writer.js';

const log = pino({ level: 'info' }, batchedStdout());
for (let n = 0; n < 1000; n++) log.info({ n }, 'line');
process.exit(0);
