import { compileValidators, type Validators } from '../schemas/index.ts';
import { isEmailAddress } from './email.ts';
import { isCalendarDay } from './time.ts';

/** Compiled validators by configuration (their agency codes): compiling them costs about 0.2 s of CPU. */
const compiled = new Map<string, Validators>();

/**
 * The schema validators of a configuration (its bank agency codes), with core's format rules: the one
 * place they are compiled, for the Deps of a process and for the webhook's worker threads alike. Compiled
 * once per process and configuration: a process that opens its store more than once (the ops CLI run
 * in-process, the tests' apps) reuses them. A validator keeps nothing between calls but the errors of the
 * call just made, read before the next call, as within one app's requests.
 */
export function configuredValidators(bankAgencyCodes: readonly string[]): Validators {
  const key = JSON.stringify(bankAgencyCodes);
  let validators = compiled.get(key);
  if (!validators) {
    validators = compileValidators({
      bankAgencyCodes,
      formats: { email: isEmailAddress, date: isCalendarDay },
    });
    compiled.set(key, validators);
  }
  return validators;
}
