import { compileValidators, type Validators } from '../schemas/index.ts';
import { isEmailAddress } from './email.ts';
import { isCalendarDay } from './time.ts';

/**
 * The schema validators of a configuration (its bank agency codes), with core's format rules: the one
 * place they are compiled, for the Deps of a process and for the webhook's worker threads alike.
 */
export function configuredValidators(bankAgencyCodes: readonly string[]): Validators {
  return compileValidators({
    bankAgencyCodes,
    formats: { email: isEmailAddress, date: isCalendarDay },
  });
}
