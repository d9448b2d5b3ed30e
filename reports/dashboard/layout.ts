/**
 * The dashboard's one page frame: landmarks (header, nav, main), the agency switcher, the menu and the
 * sign-out form; our stylesheet only (no CDN). Page authors give escaped HTML and get a whole document.
 */
import { escapeHtml, html, SafeHtml } from '../../core/html.ts';
import type { DashboardState } from './state.ts';

export { escapeHtml, html, SafeHtml } from '../../core/html.ts';

/** The menu items; `active` marks the page's own. */
export type DashboardNav =
  'overview' | 'payments' | 'postings' | 'callbacks' | 'reconciliation' | 'api-access' | 'audit';

const NAV: readonly { key: DashboardNav; label: string; path: string; adminOnly?: boolean }[] = [
  { key: 'overview', label: 'Overview', path: '' },
  { key: 'payments', label: 'Payments', path: 'payments' },
  { key: 'postings', label: 'Bank postings', path: 'postings' },
  { key: 'callbacks', label: 'Callbacks', path: 'callbacks' },
  { key: 'reconciliation', label: 'Reconciliation', path: 'reconciliation' },
  { key: 'api-access', label: 'API access', path: 'api-access', adminOnly: true },
  { key: 'audit', label: 'Audit log', path: 'audit' },
];

/** The URL of an agency's menu item: `/dashboard/a/LZS/payments` (the overview is `/dashboard/a/LZS/`). */
export function dashboardHref(agency: string, nav: DashboardNav): string {
  const item = NAV.find((n) => n.key === nav);
  return `/dashboard/a/${encodeURIComponent(agency)}/${item?.path ?? ''}`;
}

/** The hidden field that carries the session's CSRF token; every form that POSTs includes it. */
export function csrfField(state: DashboardState): string {
  return `<input type="hidden" name="_csrf" value="${escapeHtml(state.csrf)}" />`;
}

/**
 * A table in a box that scrolls sideways on a phone; the box is a named, focusable region, so keyboard
 * users can scroll it too (axe-core's scrollable-region-focusable). `table` is HTML already escaped.
 */
export function scrollTable(label: string, table: string): string {
  return `<div class="table-wrap" role="region" aria-label="${escapeHtml(label)}" tabindex="0">${table}</div>`;
}

/** A whole dashboard page for the signed-in user; `body` is HTML already escaped. */
export function dashboardPage(
  state: DashboardState,
  opts: { title: string; active: DashboardNav; body: string; status?: string },
): string {
  const current = state.agencies.find((a) => a.code === state.agency);
  const agencyName = current?.name ?? state.agency;
  const menu = NAV.filter((n) => !n.adminOnly || state.role === 'admin');
  const others = state.agencies.filter((a) => a.code !== state.agency);
  return document(
    `${opts.title} · ${agencyName}`,
    html`<a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <p class="brand"><a href="${dashboardHref(state.agency, 'overview')}">amil</a></p>
        <p class="agency">
          <span class="agency-name">${agencyName}</span>
          <span class="role">${state.role}</span>
        </p>
        ${
          others.length > 0
            ? html`<details class="switch">
                <summary>Switch agency</summary>
                <ul>
                  ${others.map(
                    (a) =>
                      html`<li><a href="${dashboardHref(a.code, 'overview')}">${a.name} (${a.code})</a></li>`,
                  )}
                </ul>
              </details>`
            : ''
        }
        <form class="signout" method="post" action="/dashboard/logout">
          ${new SafeHtml(csrfField(state))}
          <span class="user">${state.user.name}</span>
          <button type="submit">Sign out</button>
        </form>
      </header>
      <nav class="menu" aria-label="Dashboard">
        <ul>
          ${menu.map(
            (n) =>
              html`<li>
                <a
                  href="${dashboardHref(state.agency, n.key)}"
                  ${n.key === opts.active ? new SafeHtml('aria-current="page"') : ''}
                  >${n.label}</a
                >
              </li>`,
          )}
        </ul>
      </nav>
      <main id="main">
        <h1>${opts.title}</h1>
        ${opts.status ? html`<p class="status" role="status">${opts.status}</p>` : ''}
        ${new SafeHtml(opts.body)}
      </main>`,
  );
}

/** A page outside any agency (sign-in, an error before the agency is known): no menu. */
export function plainPage(title: string, body: string): string {
  return document(
    title,
    html`<a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <p class="brand"><a href="/dashboard/">amil</a></p>
      </header>
      <main id="main" class="narrow">
        <h1>${title}</h1>
        ${new SafeHtml(body)}
      </main>`,
  );
}

function document(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" href="data:," />
        <title>${title} · amil dashboard</title>
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
      </head>
      <body>
        ${body}
        <footer><p>amil merchant dashboard</p></footer>
      </body>
    </html>`.value;
}
