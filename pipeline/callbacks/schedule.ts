import type { Config } from '../../core/config.ts';

/**
 * When to try a failed callback again (docs/checkout.md): about every CALLBACK_RETRY_MS (plus or minus 20%
 * jitter, so a merchant's returning server is not hit by every callback at once) during the fast phase;
 * then waits about as long as the time since the fast phase ended (so the interval roughly doubles per
 * attempt) up to CALLBACK_MAX_INTERVAL_MS; undefined once past CALLBACK_GIVE_UP_MS from the first attempt.
 */
export function nextAttemptAt(
  config: Config['callbacks'],
  firstAttemptAt: Date,
  now: Date,
  random: () => number = Math.random,
): Date | undefined {
  const elapsed = now.getTime() - firstAttemptAt.getTime();
  const base =
    elapsed < config.fastPhaseMs
      ? config.retryMs
      : Math.min(config.maxIntervalMs, Math.max(2 * config.retryMs, elapsed - config.fastPhaseMs));
  const delay = base * (0.8 + 0.4 * random());
  const next = now.getTime() + delay;
  return next - firstAttemptAt.getTime() > config.giveUpMs ? undefined : new Date(next);
}
