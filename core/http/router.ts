import Router, { type Layer } from '@koa/router';
import type { AppRouter, AppState } from './state.ts';

type AppLayer = Layer<AppState>;

// A route path that starts with a literal first segment: `/v2/checkout/:orderNo` is filed under `v2`.
const LITERAL_FIRST_SEGMENT = /^\/([A-Za-z0-9_-]+)(?:\/|$)/;

/**
 * The router of an app: @koa/router's, but a request's path is tested only against the routes that can
 * match it. Each route whose path begins with a literal segment is filed under that segment; every other
 * layer (a path starting with a parameter, `/`, a regular expression, a middleware of `use`) is tested for
 * every request. The layers tested keep their order, so what matches, the parameters, the 404s and the 405s
 * with their Allow header are @koa/router's own; a request tests a dozen routes instead of every host's.
 */
export function createRouter(): AppRouter {
  const router = new Router<AppState>();
  const match = router.match.bind(router);
  let filedFor: AppLayer[] | undefined;
  let filedLength = 0;
  let bySegment = new Map<string, AppLayer[]>();
  let unfiled: AppLayer[] = [];

  // Filed again whenever routes were added (they all are before the first request).
  const file = () => {
    const segments = router.stack.map(segmentOf);
    const keys = new Set(segments.filter((s) => s !== undefined));
    bySegment = new Map(
      [...keys].map((key) => [
        key,
        router.stack.filter((_, i) => segments[i] === undefined || segments[i] === key),
      ]),
    );
    unfiled = router.stack.filter((_, i) => segments[i] === undefined);
    filedFor = router.stack;
    filedLength = router.stack.length;
  };

  router.match = (path, method) => {
    if (filedFor !== router.stack || filedLength !== router.stack.length) file();
    const end = path.indexOf('/', 1);
    // Routes are case-insensitive (@koa/router's default), so segments are filed and looked up lower-case.
    const segment = (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
    const all = router.stack;
    router.stack = bySegment.get(segment) ?? unfiled;
    try {
      return match(path, method);
    } finally {
      router.stack = all;
    }
  };
  return router;
}

/** The literal first segment of a route, lower-case; undefined for a layer that must be tested always. */
function segmentOf(layer: AppLayer): string | undefined {
  if (typeof layer.path !== 'string' || layer.methods.length === 0) return undefined;
  if (layer.opts.sensitive === true || layer.opts.end === false) return undefined;
  return LITERAL_FIRST_SEGMENT.exec(layer.path)?.[1]?.toLowerCase();
}
