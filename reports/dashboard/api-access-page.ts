/** The API access page's HTML: report tokens, the API key, callback hosts and report recipients. */
import { escapeHtml, html, SafeHtml } from '../../core/html.ts';
import type { AgencyRow, ReportTokenRow } from '../../core/store/index.ts';
import { formatKl } from '../../core/time.ts';
import { csrfField, dashboardHref, dashboardPage } from './layout.ts';
import type { DashboardState } from './state.ts';

/** The lifetimes offered for a new token; the longest is a year, so a forgotten token still ends. */
export const TOKEN_LIFETIMES: readonly { value: string; label: string; seconds: number }[] = [
  { value: '1d', label: '1 day', seconds: 86_400 },
  { value: '7d', label: '7 days', seconds: 7 * 86_400 },
  { value: '30d', label: '30 days', seconds: 30 * 86_400 },
  { value: '90d', label: '90 days', seconds: 90 * 86_400 },
  { value: '365d', label: '1 year', seconds: 365 * 86_400 },
];
export const DEFAULT_LIFETIME = '90d';

export interface ApiAccessView {
  agency: AgencyRow;
  tokens: ReportTokenRow[];
  now: Date;
  /** A token just minted: shown this once. */
  minted?: { token: string; jti: string; agencies: string[]; expiresAt: Date };
  /** An API key just rotated: shown this once. */
  apiKey?: string;
  /** Problems of the form just sent, by form. */
  errors?: { form: 'token' | 'key' | 'settings'; messages: string[] };
  /** What the settings form held when it was refused, to correct rather than retype. */
  typed?: { recipients: string; callbackHosts: string };
  status?: string;
}

const kl = (iso: string | Date) => `${formatKl(typeof iso === 'string' ? new Date(iso) : iso)} MYT`;

function tokenState(row: ReportTokenRow, now: Date): string {
  if (row.revokedAt !== null) return `revoked ${kl(row.revokedAt)}`;
  return Date.parse(row.expiresAt) <= now.getTime() ? 'expired' : 'active';
}

const errorList = (view: ApiAccessView, form: 'token' | 'key' | 'settings') =>
  view.errors?.form === form
    ? html`<div class="error" role="alert">
        <ul>
          ${view.errors.messages.map((m) => html`<li>${m}</li>`)}
        </ul>
      </div>`
    : '';

/**
 * A textarea whose content is exactly `value`: built as a plain string, because the formatter would move a
 * tagged template's text onto lines of its own.
 */
function textarea(attributes: Record<string, string>, value: string): SafeHtml {
  const attrs = Object.entries(attributes)
    .map(([name, v]) => (v === '' ? name : `${name}="${escapeHtml(v)}"`))
    .join(' ');
  return new SafeHtml(`<textarea ${attrs}>${escapeHtml(value)}</textarea>`);
}

const readonlyField = (id: string, value: string): SafeHtml =>
  textarea({ id, readonly: '', rows: value.length > 80 ? '4' : '1', spellcheck: 'false' }, value);

const settingField = (id: string, name: string, value: string): SafeHtml =>
  textarea({ id, name, rows: '4', 'aria-describedby': `${id}-hint` }, value);

/** A secret shown once, in a read-only field with a copy button (assets/copy.js). */
function shownOnce(id: string, label: string, value: string, note: string): SafeHtml {
  return html`<div class="secret">
    <label for="${id}">${label}</label>
    ${readonlyField(id, value)}
    <p>
      <button type="button" data-copy="${id}" data-status="${id}-status">Copy</button>
      <span id="${id}-status" role="status"></span>
    </p>
    <p class="hint">${note}</p>
  </div>`;
}

/** The whole page for an admin of the state's agency. */
export function apiAccessPage(state: DashboardState, view: ApiAccessView): string {
  const base = dashboardHref(state.agency, 'api-access');
  const csrf = new SafeHtml(csrfField(state));
  const adminOf = state.agencies.filter((a) => a.role === 'admin');
  const s = view.agency.settings;
  const body = html`
    <section class="card" aria-labelledby="tokens-h">
      <h2 id="tokens-h">Report tokens</h2>
      <p class="hint">
        A report token is the <span class="mono">Authorization: Bearer</span> credential of the report API
        (<span class="mono">/api/report/v1/...</span>). One token can cover several of your agencies.
      </p>
      ${
        view.minted
          ? shownOnce(
              'new-token',
              `New token for ${view.minted.agencies.join(', ')}, valid until ${kl(view.minted.expiresAt)}`,
              view.minted.token,
              'Copy it now: it is shown only this once. Revoke it below if it leaks.',
            )
          : ''
      }
      ${errorList(view, 'token')}
      <form method="post" action="${base}/tokens" class="stack">
        ${csrf}
        <fieldset>
          <legend>Agencies it covers</legend>
          ${adminOf.map(
            (a) =>
              html`<label
                ><input
                  type="checkbox"
                  name="agencies"
                  value="${a.code}"
                  ${a.code === state.agency ? new SafeHtml('checked') : ''}
                />
                ${a.name} (${a.code})</label
              >`,
          )}
        </fieldset>
        <label for="ttl">Valid for</label>
        <select id="ttl" name="ttl">
          ${TOKEN_LIFETIMES.map(
            (l) =>
              html`<option value="${l.value}" ${l.value === DEFAULT_LIFETIME ? new SafeHtml('selected') : ''}>
                ${l.label}
              </option>`,
          )}
        </select>
        <label for="label">What it is for (optional)</label>
        <input id="label" name="label" maxlength="80" placeholder="e.g. finance reporting job" />
        <button type="submit">Create token</button>
      </form>
      <h3>Tokens covering ${state.agency}</h3>
      ${
        view.tokens.length === 0
          ? html`<p>None yet.</p>`
          : html`<div
              class="table-wrap"
              role="region"
              aria-label="Tokens covering ${state.agency}"
              tabindex="0"
            >
              <table>
                <thead>
                  <tr>
                    <th scope="col">Token id</th>
                    <th scope="col">Agencies</th>
                    <th scope="col">For</th>
                    <th scope="col">Created</th>
                    <th scope="col">Expires</th>
                    <th scope="col">State</th>
                    <th scope="col"><span class="visually-hidden">Action</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${view.tokens.map((t) => {
                    const state_ = tokenState(t, view.now);
                    return html`<tr>
                      <td class="mono">${t.jti}</td>
                      <td>${t.agencies.join(', ')}</td>
                      <td>${t.label ?? ''}</td>
                      <td>${kl(t.issuedAt)}</td>
                      <td>${kl(t.expiresAt)}</td>
                      <td>${state_}</td>
                      <td>
                        ${
                          state_ === 'active'
                            ? html`<form method="post" action="${base}/tokens/${t.jti}/revoke" class="inline">
                                ${csrf}
                                <button type="submit" class="danger" aria-label="Revoke token ${t.jti}">
                                  Revoke
                                </button>
                              </form>`
                            : ''
                        }
                      </td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
      }
    </section>

    <section class="card" aria-labelledby="key-h">
      <h2 id="key-h">API key</h2>
      <p class="hint">
        The API key signs checkout orders and QR requests (spec 5.2). It was
        ${view.agency.apiKeyRotatedAt ? `last replaced ${kl(view.agency.apiKeyRotatedAt)}` : 'never replaced'};
        it is shown only when replaced.
      </p>
      ${
        view.apiKey
          ? shownOnce(
              'new-key',
              'New API key',
              view.apiKey,
              'Copy it now: it is shown only this once. The old key already no longer works.',
            )
          : ''
      }
      ${errorList(view, 'key')}
      <form method="post" action="${base}/api-key" class="stack">
        ${csrf}
        <label
          ><input type="checkbox" name="confirm" value="yes" required /> I understand the current key stops
          working at once</label
        >
        <button type="submit" class="danger">Replace the API key</button>
      </form>
    </section>

    <section class="card" aria-labelledby="settings-h">
      <h2 id="settings-h">Callback hosts and report recipients</h2>
      ${errorList(view, 'settings')}
      <form method="post" action="${base}/settings" class="stack">
        ${csrf}
        <label for="callback-hosts">Callback hosts</label>
        <p class="hint" id="callback-hosts-hint">
          Hosts an order's returnUrl may point at, one per line (host or host:port).
        </p>
        ${settingField('callback-hosts', 'callback_hosts', view.typed?.callbackHosts ?? s.callbackHosts.join('\n'))}
        <label for="recipients">Report recipients</label>
        <p class="hint" id="recipients-hint">
          Who gets the nightly reconciliation workbook, one e-mail per line.
        </p>
        ${settingField('recipients', 'recipients', view.typed?.recipients ?? s.reportRecipients.join('\n'))}
        <button type="submit">Save</button>
      </form>
    </section>
    <script src="/dashboard/assets/copy.js"></script>
  `;
  return dashboardPage(state, {
    title: 'API access',
    active: 'api-access',
    body: body.value,
    ...(view.status !== undefined && { status: view.status }),
  });
}
