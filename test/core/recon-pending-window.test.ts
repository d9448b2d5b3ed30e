/**
 * The window of checkout payments that the day's snapshot and a replay's archive both read as possibly
 * still pending (checkoutPendingSince): it must reach back past the longest expiry the configuration
 * accepts, or a payment pending that long would drop out of the pending roll.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { checkoutPendingSince } from '../../core/store/recon-snapshot.ts';

test('the pending window reaches back past the longest PENDING_EXPIRY_MS the configuration accepts', () => {
  const longest = 30 * 86_400_000;
  assert.equal(loadConfig({ PENDING_EXPIRY_MS: String(longest) }).checkout.pendingExpiryMs, longest);
  assert.throws(() => loadConfig({ PENDING_EXPIRY_MS: String(longest + 1) }), ConfigError);
  const end = '2026-11-20T16:00:00.000Z'; // the end of 2026-11-20 in Kuala Lumpur
  const since = checkoutPendingSince(end);
  assert.ok(Date.parse(end) - Date.parse(since) > longest, `${since} is not before ${end} minus 30 days`);
  assert.equal(since, '2026-10-20T16:00:00.000Z');
});
