/**
 * The configuration: read once from the environment, validated (every problem listed), typed and frozen.
 * Each variable is one entry of the table in core/config/variables.ts; the Config type, the validation and
 * the README's table come from it. The production guards are in core/config/production.ts.
 */
import { readSettings, type Env } from './config/load.ts';
import type { SettingsOf } from './config/variable.ts';
import { SETTINGS } from './config/variables.ts';

export { ConfigError } from './config/load.ts';
export { ENV_VARS, type EnvVar } from './config/readme.ts';
export {
  ACQUIRERS,
  HOSTS,
  PIPELINE_JOB_NAMES,
  type AcquirerName,
  type BankRoute,
  type HostName,
  type PipelineJobName,
} from './config/names.ts';
export { DEMO_ADMIN_PASSWORD, DEMO_PAY_LINK_SECRET, DEMO_REPORT_TOKEN_SECRET } from './config/production.ts';

/** Every setting of a process, as the table in core/config/variables.ts describes it. */
export type Config = SettingsOf<typeof SETTINGS>;

/** Reads, validates and freezes the configuration. Throws ConfigError listing every problem. */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  return deepFreeze({ ...readSettings(SETTINGS, env), ...overrides });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
