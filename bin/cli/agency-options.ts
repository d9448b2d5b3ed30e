/** The settings options `amil agency add` and `amil agency set` share, their parsers, and the change they make. */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { callbackHostProblem, recipientProblem } from '../../core/agency-admin.ts';
import { agencyLogo } from '../../core/agency-logo.ts';
import { ringgitStringToSen } from '../../core/money.ts';
import type { AddChargeRule, AgencySettings } from '../../core/store/index.ts';
import { list } from './args.ts';

const emails = (value: string): string[] => {
  const out = list(value);
  for (const e of out) {
    const problem = recipientProblem(e);
    if (problem) throw new InvalidArgumentError(problem);
  }
  return out;
};
const hosts = (value: string): string[] => {
  const out = list(value).map((h) => h.toLowerCase());
  for (const h of out) {
    const problem = callbackHostProblem(h);
    if (problem) throw new InvalidArgumentError(problem);
  }
  return out;
};
const categories = (value: string): string[] => {
  const out = list(value);
  for (const c of out)
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(c))
      throw new InvalidArgumentError(`category ids are lower-case words with dashes: ${c}`);
  return out;
};
/** `fpx=1.00` (ringgit) or `card=1.5%`, repeatable. */
const addCharge = (
  value: string,
  previous: AgencySettings['addCharges'] = {},
): AgencySettings['addCharges'] => {
  const match = /^(fpx|card|ewallet)=(?:(\d{1,4}(?:\.\d{1,2})?)|(\d{1,2}(?:\.\d{1,2})?)%)$/.exec(value);
  if (!match)
    throw new InvalidArgumentError('use METHOD=RINGGIT or METHOD=PERCENT%, e.g. fpx=1.00 or card=1.5%');
  const [, method = 'fpx', ringgit, percent] = match;
  const rule: AddChargeRule =
    ringgit !== undefined ? { fixedSen: ringgitStringToSen(ringgit) ?? 0 } : { percent: Number(percent) };
  return { ...previous, [method]: rule };
};
/** `zakat-fitrah=English name|Malay name`, repeatable: what payers read for a category. */
const categoryName = (
  value: string,
  previous: AgencySettings['categoryNames'] = {},
): AgencySettings['categoryNames'] => {
  const match = /^([a-z0-9][a-z0-9-]{0,62})=([^|]{1,80})\|([^|]{1,80})$/.exec(value);
  const [, id = '', en = '', ms = ''] = match ?? [];
  if (!match || en.trim() === '' || ms.trim() === '')
    throw new InvalidArgumentError(
      'use ID="English name|Malay name", e.g. zakat-fitrah="Zakat Fitrah|Zakat Fitrah"',
    );
  return { ...previous, [id]: { en: en.trim(), ms: ms.trim() } };
};
const bounded =
  (max: number) =>
  (value: string): string => {
    if (value.length === 0 || value.length > max)
      throw new InvalidArgumentError(`1 to ${max} characters (it is written into a QR code tag)`);
    return value;
  };

/** An ISO 18245 merchant category code: 4 digits. */
function mcc(value: string): string {
  if (!/^\d{4}$/.test(value)) throw new InvalidArgumentError('4 digits, e.g. 8661 (religious organisations)');
  return value;
}

/** The parsed settings options (commander's camel-case names). */
export interface AgencyOptions {
  name?: string;
  categories?: string[];
  recipients?: string[];
  callbackHosts?: string[];
  addCharge?: AgencySettings['addCharges'];
  categoryName?: AgencySettings['categoryNames'];
  logo?: string;
  duitnowAcquirer?: string;
  duitnowMerchant?: string;
  duitnowName?: string;
  duitnowCity?: string;
  duitnowCategory?: string;
  acceptUnsignedOrders?: string;
}

/** Adds the settings options to `add` or `set`. */
export function withAgencyOptions(command: Command): Command {
  return command
    .option(
      '--categories <ids>',
      'payment categories, comma-separated (e.g. zakat-fitrah,zakat-pendapatan)',
      categories,
    )
    .option(
      '--category-name <id=names>',
      'what payers read for a category: ID="English|Malay" (repeatable)',
      categoryName,
    )
    .option('--logo <file>', 'the agency logo payers see: PNG, JPEG or WebP, at most 64 KB')
    .option('--recipients <emails>', 'report e-mail recipients, comma-separated', emails)
    .option('--callback-hosts <hosts>', 'hosts a returnUrl may point at, comma-separated', hosts)
    .option('--add-charge <rule>', 'add charge per method: fpx=1.00 or card=1.5% (repeatable)', addCharge)
    .option('--duitnow-acquirer <id>', 'DuitNow acquirer id', bounded(25))
    .option('--duitnow-merchant <id>', 'DuitNow merchant id', bounded(25))
    .option('--duitnow-name <name>', 'DuitNow merchant name (at most 25)', bounded(25))
    .option('--duitnow-city <city>', 'DuitNow merchant city (at most 15)', bounded(15))
    .option('--duitnow-category <code>', 'DuitNow merchant category code, 4 digits (default 8661)', mcc)
    .option('--accept-unsigned-orders <yes|no>', 'take checkout orders without a signature');
}

/** The settings change the options ask for: lists replace, add charges and DuitNow fields merge. */
export function settingsFrom(opts: AgencyOptions, current: AgencySettings): Partial<AgencySettings> {
  const change: Partial<AgencySettings> = {};
  if (opts.categories) change.paymentCategories = opts.categories;
  if (opts.recipients) change.reportRecipients = opts.recipients;
  if (opts.callbackHosts) change.callbackHosts = opts.callbackHosts;
  if (opts.addCharge) change.addCharges = { ...current.addCharges, ...opts.addCharge };
  if (opts.logo !== undefined) {
    const logo = agencyLogo(readFileSync(opts.logo));
    if (typeof logo === 'string') throw new InvalidArgumentError(`--logo: ${logo}`);
    change.logo = logo;
  }
  if (opts.categoryName) {
    const known = opts.categories ?? current.paymentCategories;
    const unknown = Object.keys(opts.categoryName).filter((id) => !known.includes(id));
    if (unknown.length > 0)
      throw new InvalidArgumentError(`not a payment category of this agency: ${unknown.join(', ')}`);
    change.categoryNames = { ...current.categoryNames, ...opts.categoryName };
  }
  const duitnow = {
    ...(opts.duitnowAcquirer !== undefined && { acquirerId: opts.duitnowAcquirer }),
    ...(opts.duitnowMerchant !== undefined && { merchantId: opts.duitnowMerchant }),
    ...(opts.duitnowName !== undefined && { name: opts.duitnowName }),
    ...(opts.duitnowCity !== undefined && { city: opts.duitnowCity }),
    ...(opts.duitnowCategory !== undefined && { categoryCode: opts.duitnowCategory }),
  };
  if (Object.keys(duitnow).length > 0) change.duitnow = { ...current.duitnow, ...duitnow };
  if (opts.acceptUnsignedOrders !== undefined) {
    if (!['yes', 'no'].includes(opts.acceptUnsignedOrders))
      throw new InvalidArgumentError('--accept-unsigned-orders is yes or no');
    change.acceptUnsignedOrders = opts.acceptUnsignedOrders === 'yes';
  }
  return change;
}
