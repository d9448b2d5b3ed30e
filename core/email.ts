// ajv-formats' own rule, the one the payload schemas apply: taken, not rewritten, so the config, the CLI, the
// report queries and the payloads can never disagree on what an address is.
import { fullFormats } from 'ajv-formats/dist/formats.js';

const EMAIL = fullFormats.email as RegExp;

/** Whether a value is an e-mail address: the one rule of every address amil takes in. */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value);
}

// Anything shaped like an address (`local@domain`, bracketed or not): wider than the rule above on purpose,
// since a mail server quotes what it was given, well-formed or not.
const ADDRESS_LIKE = /[^\s<>"'(),;:]+@[^\s<>"'(),;:]+/g;

/**
 * A mail server's answer with every address in it replaced: servers quote the recipient they refuse ("550
 * <siti@example.my>: Recipient address rejected"), and the reason goes on to logs, the outbox and Redis.
 */
export function withoutAddresses(text: string): string {
  return text.replace(ADDRESS_LIKE, '[address]');
}
