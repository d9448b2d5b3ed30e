import type { Deps } from '../../core/deps.ts';
import { PermanentJobError, type JobContext, type JobDefinition, type JobOutcome } from './types.ts';

/**
 * Runs a job on the payload a row carries, as both runtimes do: the payload is checked against the job's
 * schema first, so a bad one fails the job at once (PermanentJobError, not retried) with what is wrong,
 * rather than deep inside the job or, worse, as a job that silently does nothing.
 */
export async function runJob(
  job: JobDefinition<never>,
  data: unknown,
  deps: Deps,
  context: JobContext = {},
): Promise<JobOutcome | void> {
  const check = deps.validators.jobs(job.payloadSchema);
  if (!check(data)) {
    const problems = check.errors().map((e) => `${e.pointer || '(the payload)'} ${e.message}`);
    throw new PermanentJobError(`${job.name} payload: ${problems.join('; ')}`);
  }
  return job.process(data as never, deps, context);
}
