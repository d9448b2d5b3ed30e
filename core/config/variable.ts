/**
 * The shape of one entry of the configuration table (core/config/variables.ts): a variable read from the
 * environment, or a setting derived from variables. The Config type is computed from the table's tree.
 */

/** Reads a trimmed, non-blank value; pushes a problem (naming the variable) when the value is wrong. */
export type Parser<T> = (raw: string, name: string, problems: string[]) => T;

/** What defaults and production rules may look at: the deployment, and other variables' values. */
export interface Context {
  readonly production: boolean;
  readonly testing: boolean;
  get<T>(variable: Variable<T>): T;
}

/** A guard that refuses a value (demo secrets, the sandbox...) where it must not run; see production.ts. */
export type ProductionRule<T> = {
  // Method syntax keeps rules bivariant, so a Variable<number> is still a Variable<unknown> in the tree.
  rule(
    value: T,
    variable: { readonly name: string; readonly set: boolean },
    ctx: Context,
  ): string | undefined;
}['rule'];

interface Common<T> {
  readonly name: string;
  readonly parse: Parser<T>;
  /** The README's "meaning" cell. */
  readonly doc: string;
  // NoInfer: T comes from the parser; a guard written for a wider type (string) must not widen it.
  readonly production?: readonly ProductionRule<NoInfer<T>>[];
}

/** A default is the text an unset variable reads as; one computed from the context is documented in words. */
type Default =
  | { readonly default: string; readonly readme?: string }
  | { readonly default: (ctx: Context) => string; readonly readme: string };
type MaybeDefault =
  | { readonly default?: undefined; readonly readme?: string }
  | { readonly default: (ctx: Context) => string | undefined; readonly readme: string };

/** One environment variable. */
export class Variable<T> {
  readonly name: string;
  readonly parse: Parser<T>;
  readonly doc: string;
  readonly production: readonly ProductionRule<T>[];
  readonly default: string | ((ctx: Context) => string | undefined) | undefined;
  /** The README's "default" cell (Markdown). */
  readonly readme: string;

  constructor(spec: Common<T> & (Default | MaybeDefault)) {
    this.name = spec.name;
    this.parse = spec.parse;
    this.doc = spec.doc;
    this.production = spec.production ?? [];
    this.default = spec.default;
    this.readme = spec.readme ?? (typeof spec.default === 'string' ? `\`${spec.default}\`` : '(unset)');
  }
}

/** A variable that always has a value (its default when unset). */
export function variable<T>(spec: Common<T> & Default): Variable<T> {
  return new Variable<T>(spec);
}

/** A variable that may have no value (undefined in the config). */
export function optional<T>(spec: Common<T> & MaybeDefault): Variable<T | undefined> {
  return new Variable<T | undefined>(spec);
}

type Values<I extends readonly Variable<unknown>[]> = {
  [K in keyof I]: I[K] extends Variable<infer T> ? T : never;
};

/** A setting computed from variables (a path under DATA_DIR, horizons from two variables). */
export class Derived<T> {
  constructor(
    readonly inputs: readonly Variable<unknown>[],
    readonly compute: (...values: never[]) => T,
  ) {}
}

/** A setting computed from the values of `inputs`. */
export function derived<const I extends readonly Variable<unknown>[], T>(
  inputs: I,
  compute: (...values: Values<I>) => T,
): Derived<T> {
  return new Derived<T>(inputs, compute as (...values: never[]) => T);
}

/** The configuration table: keys are Config's keys, leaves are variables or derived settings. */
export interface Tree {
  readonly [key: string]: Variable<unknown> | Derived<unknown> | Tree;
}

type ValueOf<L> = L extends Variable<infer T> ? T : L extends Derived<infer T> ? T : never;
type IsLeaf<L> = L extends Variable<unknown> | Derived<unknown> ? true : false;

/** The settings a tree describes: each leaf's value under its key. */
export type SettingsOf<S> = {
  readonly [K in keyof S]: IsLeaf<S[K]> extends true ? ValueOf<S[K]> : SettingsOf<S[K]>;
};
