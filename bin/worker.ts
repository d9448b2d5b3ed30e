/** The pipeline worker process (needs REDIS_URL): `npm run worker`. */
import { runMain } from './run-main.ts';
import { startWorker } from './start-worker.ts';

await runMain(startWorker);
