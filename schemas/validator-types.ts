/**
 * The types every validator of this folder shares. Their own file, so that index.ts and the validator
 * modules it composes (bank-batch, job-validators, query-validators) import them without importing each other.
 */

/** A schema document as loaded from its file. */
export type JsonSchema = Record<string, unknown> & { $id: string; title: string };

/** One problem of a request, located by a JSON pointer into it. */
export interface FieldError {
  pointer: string;
  message: string;
}

export type Validator<T> = ((value: unknown) => value is T) & { errors(): FieldError[] };
