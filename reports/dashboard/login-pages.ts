/** The sign-in pages: e-mail and password, then the TOTP code when the user has one. */
import { html } from '../../core/html.ts';
import { plainPage } from './layout.ts';

/** The sign-in form; `csrf` is the double-submit token of its cookie, `next` where to go afterwards. */
export function loginPage(input: {
  csrf: string;
  next: string;
  email?: string;
  error?: string;
  notice?: string;
}): string {
  return plainPage(
    'Sign in',
    html`${input.notice ? html`<p class="status" role="status">${input.notice}</p>` : ''}
      ${input.error ? html`<p class="error" role="alert">${input.error}</p>` : ''}
      <form method="post" action="/dashboard/login" class="stack">
        <input type="hidden" name="_csrf" value="${input.csrf}" />
        <input type="hidden" name="next" value="${input.next}" />
        <label for="email">E-mail</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value="${input.email ?? ''}"
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>`.value,
  );
}

/** The second step: the 6-digit code of the user's authenticator app. */
export function codePage(input: { csrf: string; error?: string }): string {
  return plainPage(
    'Enter your code',
    html`${input.error ? html`<p class="error" role="alert">${input.error}</p>` : ''}
      <p>Open your authenticator app and enter the 6-digit code it shows for amil.</p>
      <form method="post" action="/dashboard/login/code" class="stack">
        <input type="hidden" name="_csrf" value="${input.csrf}" />
        <label for="code">Code</label>
        <input
          id="code"
          name="code"
          inputmode="numeric"
          pattern="[0-9]{6}"
          maxlength="6"
          autocomplete="one-time-code"
          required
        />
        <button type="submit">Continue</button>
      </form>
      <form method="post" action="/dashboard/logout">
        <input type="hidden" name="_csrf" value="${input.csrf}" />
        <button type="submit" class="link">Cancel and sign out</button>
      </form>`.value,
  );
}
