/** Reads the configuration table against an environment: every problem listed, then production guards. */
import { NODE_ENV } from './variables.ts';
import { Derived, Variable, type Context, type SettingsOf, type Tree } from './variable.ts';

/** Raised with every problem found, so an operator fixes them all in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

interface Reading {
  readonly value: unknown;
  readonly set: boolean;
  /** Parsed without a problem (a value that did not parse is not judged again by the guards). */
  readonly ok: boolean;
}

/** The variables of a tree, in table order, each once. */
export function variablesOf(tree: Tree): Variable<unknown>[] {
  const found = new Set<Variable<unknown>>();
  const walk = (node: Tree) => {
    for (const leaf of Object.values(node)) {
      if (leaf instanceof Variable) found.add(leaf);
      else if (leaf instanceof Derived) for (const input of leaf.inputs) found.add(input);
      else walk(leaf);
    }
  };
  walk(tree);
  return [...found];
}

/** The settings of `tree` read from `env`. Throws ConfigError listing every problem. */
export function readSettings<S extends Tree>(tree: S, env: Env): SettingsOf<S> {
  const problems: string[] = [];
  const readings = new Map<Variable<unknown>, Reading>();

  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const get = <T>(variable: Variable<T>): T => {
    let reading = readings.get(variable);
    if (!reading) {
      reading = readVariable(variable);
      readings.set(variable, reading);
    }
    return reading.value as T;
  };
  const ctx: Context = {
    get production() {
      return get(NODE_ENV) === 'production';
    },
    get testing() {
      return get(NODE_ENV) === 'test';
    },
    get,
  };
  // An unset variable reads as its default text; a value with a problem reads as the default too, so the
  // variables that depend on it are judged as if it were unset (the problem is listed either way).
  const readVariable = (variable: Variable<unknown>): Reading => {
    const fallback = (into: string[]): unknown => {
      const text = typeof variable.default === 'function' ? variable.default(ctx) : variable.default;
      return text === undefined ? undefined : variable.parse(text, variable.name, into);
    };
    const raw = read(variable.name);
    if (raw === undefined) return { value: fallback(problems), set: false, ok: true };
    const before = problems.length;
    const value = variable.parse(raw, variable.name, problems);
    if (problems.length === before) return { value, set: true, ok: true };
    return { value: fallback([]), set: true, ok: false };
  };

  const build = (node: Tree): Record<string, unknown> => {
    const settings: Record<string, unknown> = {};
    for (const [key, leaf] of Object.entries(node)) {
      const value =
        leaf instanceof Variable
          ? get(leaf)
          : leaf instanceof Derived
            ? leaf.compute(...(leaf.inputs.map(get) as never[]))
            : build(leaf);
      settings[key] = value;
    }
    return settings;
  };
  const settings = build(tree);

  for (const variable of variablesOf(tree)) {
    const reading = readings.get(variable);
    if (!reading?.ok) continue;
    for (const rule of variable.production) {
      const problem = rule(reading.value, { name: variable.name, set: reading.set }, ctx);
      if (problem !== undefined) problems.push(problem);
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return settings as SettingsOf<S>;
}
