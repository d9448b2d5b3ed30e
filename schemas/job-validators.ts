import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonSchema, Validator } from './validator-types.ts';

/** The payload check of each job, by the $id of its schema (schemas/jobs/*.json). */
export type JobValidators = (schemaId: string) => Validator<unknown>;

/**
 * Compiles the payload schema of every job once. A payload fails on its first problem (a job's payload is
 * written by our own code, so one problem names the bug); an unknown $id is a programming error.
 */
export function compileJobValidators(
  ajv: Ajv2020,
  schemas: ReadonlyMap<string, JsonSchema>,
  wrap: (validate: ValidateFunction | undefined) => Validator<unknown>,
): JobValidators {
  const byId = new Map<string, Validator<unknown>>();
  for (const [file, schema] of schemas) {
    if (file.startsWith('jobs/')) byId.set(schema.$id, wrap(ajv.getSchema(schema.$id)));
  }
  return (schemaId) => {
    const check = byId.get(schemaId);
    if (!check) throw new Error(`no job payload schema ${schemaId}`);
    return check;
  };
}
