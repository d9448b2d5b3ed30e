/**
 * The page a browser gets for a refusal under /dashboard/ (a filter out of range, a page not found, the
 * store busy): the dashboard's own frame and words for staff, with the fields to correct and the request id
 * to quote. The payer's refusal page (ingest/checkout/error-pages.ts) is for the rest of the site: it talked
 * to agency staff about "this payment", and showed the sandbox banner. API clients keep problem+json.
 */
import { ERROR_CATALOGUE } from '../../core/errors.ts';
import { html } from '../../core/html.ts';
import type { HtmlErrorPage } from '../../core/http/problem.ts';
import { setDashboardHeaders, sendHtml } from './guards.ts';
import { plainPage } from './layout.ts';

export const dashboardErrorPage: HtmlErrorPage = (ctx, error) => {
  setDashboardHeaders(ctx);
  const requestId = String(ctx.state.requestId ?? '');
  const body = html`${error.detail ? html`<p class="error" role="alert">${error.detail}</p>` : ''}
    ${
      error.fieldErrors.length > 0
        ? html`<ul>
            ${error.fieldErrors.map((e) => html`<li><code>${e.pointer}</code>: ${e.message}</li>`)}
          </ul>`
        : ''
    }
    <p><a href="/dashboard/">Back to the dashboard</a></p>
    ${requestId ? html`<p class="muted">Request ${requestId}</p>` : ''}`;
  sendHtml(ctx, error.status, plainPage(ERROR_CATALOGUE[error.code].title, String(body)));
};
