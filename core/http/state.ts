import type Router from '@koa/router';
import type { Next, ParameterizedContext } from 'koa';
import type { PreparedRecord } from '../store/bank-postings.ts';
import type { Logger } from '../logger.ts';

/**
 * What middlewares put on a request's state, each field named with the middleware that sets it. All are
 * optional here: a route states which ones its middlewares guarantee (StateWith), so no handler casts.
 */
export interface AppState {
  /** core/http/request-context.ts: the request id, echoed as X-Request-Id. */
  requestId?: string;
  /** core/http/request-context.ts: the request's child logger (it carries the id). */
  log?: Logger;
  /** ingest/partner-auth.ts requirePartner: the bank partner the password belongs to. */
  partnerId?: string;
  /**
   * ingest/bank-webhook/route.ts readBatch: the raw bytes, when they were received, and their records
   * checked and prepared for the store (with the body's SHA-256, and its gzip when the archive keeps that).
   */
  batch?: {
    body: Buffer;
    receivedAt: Date;
    records: readonly PreparedRecord[];
    bodySha256: string;
    bodyGzip?: Buffer;
  };
  /** reports/auth.ts: the agencies the credentials cover. */
  agencies?: readonly string[];
  /** reports/auth.ts requireSignedForm: the signed form's fields, in received order. */
  form?: readonly (readonly [string, string])[];
  /** ingest/checkout/lang.ts: the payer's language, once chosen for this request. */
  payerLang?: string;
  /** core/http/validate.ts: the query, checked against its schema file and typed. */
  input?: unknown;
}

/** The state of a route whose middlewares set the fields `K`. */
export type StateWith<K extends keyof AppState> = AppState & Required<Pick<AppState, K>>;

/** The state of a route behind validate(): its typed input, and the fields `K` its other middlewares set. */
export type InputState<T, K extends keyof AppState = never> = StateWith<K> & { input: T };

/** A Koa context over the app's state. */
export type AppContext<S extends AppState = AppState> = ParameterizedContext<S>;

/** A middleware over the app's state. */
export type AppMiddleware<S extends AppState = AppState> = (ctx: AppContext<S>, next: Next) => Promise<void>;

/** The router every host mounts its routes on. */
export type AppRouter = Router<AppState>;
