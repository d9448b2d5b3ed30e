// ajv-formats' own rule, the one the payload schemas apply: taken, not rewritten, so the config, the CLI, the
// report queries and the payloads can never disagree on what an address is.
import { fullFormats } from 'ajv-formats/dist/formats.js';

const EMAIL = fullFormats.email as RegExp;

/** Whether a value is an e-mail address: the one rule of every address amil takes in. */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}
