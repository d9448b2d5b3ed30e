/** The parsers of the configuration table: each reads a trimmed value and names its variable in a problem. */
import path from 'node:path';
import cronParser from 'cron-parser';
import { isEmailAddress } from '../email.ts';
import { ringgitStringToSen } from '../money.ts';
import { BUSINESS_TIMEZONE } from '../time.ts';
import type { Parser } from './variable.ts';
import { PIPELINE_JOB_NAMES, type BankRoute, type PipelineJobName } from './names.ts';

/** Any text, as given. */
export const text: Parser<string> = (raw) => raw;

/** A directory, made absolute against the working directory. */
export const directory: Parser<string> = (raw) => path.resolve(raw);

/** A whole number within bounds. */
export function int(min: number, max: number): Parser<number> {
  return (raw, name, problems) => {
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return Number(raw);
  };
}

/** true/1/yes or false/0/no, in any case. */
export const bool: Parser<boolean> = (raw, name, problems) => {
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (!['false', '0', 'no'].includes(raw.toLowerCase()))
    problems.push(`${name} must be true or false (got "${raw}")`);
  return false;
};

/** One of `values`; `phrase` is how the problem lists them. */
export function oneOf<const V extends string>(
  values: readonly V[],
  phrase = `one of ${values.join(', ')}`,
): Parser<V> {
  return (raw, name, problems) => {
    const value = values.find((v) => v === raw);
    if (value === undefined) problems.push(`${name} must be ${phrase} (got "${raw}")`);
    return value ?? (raw as V);
  };
}

/** A secret or password of at least `min` characters (never echoed). */
export function secret(min: number): Parser<string> {
  return (raw, name, problems) => {
    if (raw.length < min) problems.push(`${name} needs at least ${min} characters`);
    return raw;
  };
}

/** A comma-separated list, blanks dropped. */
export const list: Parser<readonly string[]> = (raw) =>
  raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');

/**
 * A public origin: http(s), a host, an optional port, nothing else (no user, path, query or fragment).
 * QR codes are printed: a wrong origin is found only on the poster.
 */
export const origin: Parser<string> = (raw, name, problems) => {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (
    !url ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.pathname !== '/' ||
    /[?#]/.test(raw)
  ) {
    problems.push(
      `${name} must be an http(s) origin like https://pay.example.my, without a path (got "${raw}")`,
    );
    return raw;
  }
  return url.origin;
};

/** A Redis URL; never echoed, since it may carry a password. */
export const redisUrl: Parser<string> = (raw, name, problems) => {
  if (!/^rediss?:\/\/[^\s]+$/.test(raw))
    problems.push(`${name} must look like redis://host:6379 or redis://:password@host:6379`);
  return raw;
};

/** A PostgreSQL URL; never echoed, since it carries the database password. */
export const postgresUrl: Parser<string> = (raw, name, problems) => {
  if (!/^postgres(ql)?:\/\/[^\s]+$/.test(raw))
    problems.push(`${name} must look like postgres://user:password@host:5432/amil`);
  return raw;
};

/** An SMTP URL; never echoed, since it may carry a password. */
export const smtpUrl: Parser<string> = (raw, name, problems) => {
  if (!/^smtps?:\/\/[^\s/]+(:\d+)?\/?(\?.*)?$/.test(raw))
    problems.push(`${name} must look like smtp://host:587 or smtps://user:password@host:465`);
  return raw;
};

/** A cron pattern, read in Asia/Kuala_Lumpur. */
export const cron: Parser<string> = (raw, name, problems) => {
  try {
    cronParser.parseExpression(raw, { tz: BUSINESS_TIMEZONE });
  } catch {
    problems.push(`${name} must be a cron pattern like "30 0 * * *" (got "${raw}")`);
  }
  return raw;
};

/** Ringgit like 30000.00, at least 1.00, as sen. */
export const ringgit: Parser<number> = (raw, name, problems) => {
  const sen = ringgitStringToSen(raw);
  if (sen === undefined || sen < 100)
    problems.push(`${name} must be ringgit like 30000.00, at least 1.00 (got "${raw}")`);
  return sen ?? 0;
};

/** Comma-separated e-mail addresses; each wrong one is a problem of its own. */
export const emails: Parser<readonly string[]> = (raw, name, problems) => {
  const addresses = list(raw, name, problems);
  for (const address of addresses)
    if (!isEmailAddress(address)) problems.push(`${name}: "${address}" is not an e-mail address`);
  return addresses;
};

/** A sender: an address, alone or as `Name <address>`. */
export const sender: Parser<string> = (raw, name, problems) => {
  const address = /<([^<>]*)>\s*$/.exec(raw)?.[1] ?? raw.trim();
  if (!isEmailAddress(address)) problems.push(`${name} must be an address or Name <address> (got "${raw}")`);
  return raw;
};

/** `CODE=AGENCY,...`: bank agency code -> zakat agency, or `test` for the live-test sink. */
export const bankRoutes: Parser<Readonly<Record<string, BankRoute>>> = (raw, name, problems) => {
  const routes: Record<string, BankRoute> = {};
  for (const entry of raw.split(',')) {
    const match = /^\s*([A-Z][A-Z0-9_]{0,31})\s*=\s*([A-Za-z][A-Za-z0-9_]{0,31})\s*$/.exec(entry);
    if (!match) {
      problems.push(`${name} entry "${entry}" must look like BANKLZS=LZS or BANK=test`);
      continue;
    }
    const [, code = '', target = ''] = match;
    if (routes[code]) problems.push(`${name} names ${code} twice`);
    routes[code] = target === 'test' ? { kind: 'test' } : { kind: 'agency', agency: target.toUpperCase() };
  }
  return routes;
};

/** `job=ms,...`: per-job overrides of the retry horizon; an unknown job name is a problem. */
export const jobHorizons: Parser<Partial<Record<PipelineJobName, number>>> = (raw, name, problems) => {
  const horizons: Partial<Record<PipelineJobName, number>> = {};
  for (const item of raw.split(',').map((i) => i.trim())) {
    if (item === '') continue;
    const match = /^([a-z-]+)=(\d+)$/.exec(item);
    const job = PIPELINE_JOB_NAMES.find((n) => n === match?.[1]);
    if (!match || !job) {
      problems.push(
        `${name} must list job=ms with jobs among ${PIPELINE_JOB_NAMES.join(', ')} (got "${item}")`,
      );
      continue;
    }
    horizons[job] = Number(match[2]);
  }
  return horizons;
};
