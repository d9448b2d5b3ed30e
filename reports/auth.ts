import type { Next } from 'koa';
import type { Deps } from '../core/deps.ts';
import { DomainError } from '../core/errors.ts';
import { readForm } from '../core/http/form.ts';
import type { AppContext } from '../core/http/state.ts';
import { verifyReportToken } from '../core/report-tokens.ts';
import { verifySignedRequest } from '../core/signatures.ts';

/**
 * Report authentication (spec 5.1, 5.2): `Authorization: Bearer <report token>` grants the token's
 * agencies; otherwise a GET signed with an agency's API key (query `agency`, `exp`, `signature`) grants
 * that agency. Sets ctx.state.agencies. Each refusal names its reason, never the expected value.
 */
export function requireReportAuth(deps: Deps) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    // The scheme name is case-insensitive (RFC 9110, 11.1): `bearer` and `BEARER` are Bearer too.
    const bearer = /^Bearer +(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    if (bearer) {
      const result = await verifyReportToken(
        deps.store,
        deps.config.reportTokenSecret,
        bearer,
        deps.clock.now(),
      );
      if ('refused' in result) throw new DomainError(result.refused);
      ctx.state.agencies = result.agencies;
      await next();
      return;
    }
    const entries = [...new URLSearchParams(ctx.querystring).entries()];
    const agency = entries.find(([key]) => key === 'agency')?.[1];
    if (!agency || !entries.some(([key]) => key === 'signature' || key === 'exp')) {
      throw new DomainError(
        'unauthorized',
        'Send Authorization: Bearer <token>, or sign the GET (docs/signatures.md).',
      );
    }
    const apiKey = await deps.store.agencies.apiKeyOf(agency);
    // An unknown agency is refused like a wrong signature: the answer does not tell which agencies exist.
    const refusal = apiKey
      ? verifySignedRequest({ method: 'GET', path: ctx.path, entries, apiKey, now: deps.clock.now() })
      : 'signature-mismatch';
    if (refusal) throw new DomainError(refusal);
    ctx.state.agencies = [agency];
    await next();
  };
}

/** The one agency a report is for: `agency` from the query, which the credentials must cover. */
export function reportAgency(granted: readonly string[], asked: string | undefined): string {
  const agency = asked ?? (granted.length === 1 ? granted[0] : undefined);
  if (!agency)
    throw new DomainError('bad-request', 'Name the agency: this token covers several.', [
      { pointer: '/agency', message: 'is required' },
    ]);
  if (!granted.includes(agency))
    throw new DomainError('forbidden', `These credentials do not cover agency ${agency}.`);
  return agency;
}

/**
 * The agencies a payment or zakat report covers: `agency` from the query, which the credentials must cover,
 * or else every agency of the credentials (a token's combined report, spec 5.1). A signed GET always names
 * its one agency (spec 4.2): requireReportAuth refuses it without one.
 */
export function reportAgencies(granted: readonly string[], asked: string | undefined): readonly string[] {
  if (asked === undefined) return granted;
  if (asked === '')
    throw new DomainError('bad-request', 'Name an agency, or leave agency out for all of them.', [
      { pointer: '/agency', message: 'must not be empty' },
    ]);
  if (!granted.includes(asked))
    throw new DomainError('forbidden', `These credentials do not cover agency ${asked}.`);
  return [asked];
}

// Signatures for an agency that does not exist (or has no key) are checked against this key, so the answer
// is the one a wrong signature gets, exp checks included: it never tells which agencies exist.
const NO_SUCH_AGENCY_KEY = '00000000-0000-4000-8000-000000000000';

/**
 * A form signed with an agency's API key by the POST rule of 5.3 (the QR generators). Reads the form
 * (415, 413), then checks `exp` and `signature` against the key of the form's `agency`. Sets
 * ctx.state.agencies to that one agency and ctx.state.form to the fields in received order.
 */
export function requireSignedForm(deps: Deps) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const entries = await readForm(ctx);
    const agencies = entries.filter(([key]) => key === 'agency').map(([, value]) => value);
    if (agencies.length > 1) throw new DomainError('repeated-parameter', 'agency appears more than once.');
    const [agency] = agencies;
    if (agency === undefined) {
      throw new DomainError(
        'unauthorized',
        "Send agency, exp and signature: the form is signed with the agency's API key (docs/signatures.md).",
      );
    }
    const apiKey = await deps.store.agencies.apiKeyOf(agency);
    const refusal = verifySignedRequest({
      method: 'POST',
      path: ctx.path,
      entries,
      apiKey: apiKey ?? NO_SUCH_AGENCY_KEY,
      now: deps.clock.now(),
    });
    if (refusal) throw new DomainError(refusal);
    if (apiKey === undefined) throw new DomainError('signature-mismatch');
    ctx.state.agencies = [agency];
    ctx.state.form = entries;
    await next();
  };
}
