/** The audit page: what the agency's dashboard admins changed, newest first; every member may read it. */
import type Router from '@koa/router';
import type { Deps } from '../../core/deps.ts';
import { html } from '../../core/html.ts';
import { formatKl } from '../../core/time.ts';
import { sendHtml } from './guards.ts';
import { dashboardPage, dashboardHref } from './layout.ts';
import { dashboardStateOf } from './state.ts';

const PAGE_SIZE = 50;

/** GET /dashboard/a/:agency/audit (`?before=<id>` pages back). */
export function registerAuditPage(router: Router, deps: Deps): void {
  router.get('/audit', async (ctx) => {
    const state = dashboardStateOf(ctx);
    const before = typeof ctx.query.before === 'string' && /^\d{1,15}$/.test(ctx.query.before);
    const entries = await deps.store.dashboardUsers.audit(state.agency, {
      limit: PAGE_SIZE,
      ...(before && { beforeId: Number(ctx.query.before) }),
    });
    const last = entries.at(-1);
    const body = html`${
      entries.length === 0
        ? html`<p>Nothing recorded yet.</p>`
        : html`<div class="table-wrap" role="region" aria-label="Audit log" tabindex="0">
            <table>
              <caption>
                Changes made in this agency's dashboard, newest first (Malaysia time)
              </caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">On</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                ${entries.map(
                  (e) =>
                    html`<tr>
                      <td>${formatKl(new Date(e.at))}</td>
                      <td>${e.userEmail}</td>
                      <td>${e.action}</td>
                      <td class="mono">${e.target}</td>
                      <td>${e.detail ? JSON.stringify(e.detail) : ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }
    ${
      last && entries.length === PAGE_SIZE
        ? html`<p><a href="${dashboardHref(state.agency, 'audit')}?before=${last.id}">Older entries</a></p>`
        : ''
    }`;
    sendHtml(ctx, 200, dashboardPage(state, { title: 'Audit log', active: 'audit', body: body.value }));
  });
}
