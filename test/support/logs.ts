/** A real logger whose lines are kept in memory, for tests that read what was logged. */
import { Writable } from 'node:stream';
import { createLogger } from '../../core/logger.ts';

/** A logger at `level` whose lines (one JSON object each) are kept in `lines`. */
export function capturedLogger(level: string) {
  const lines: string[] = [];
  const logger = createLogger(
    level,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  );
  return { logger, lines };
}
