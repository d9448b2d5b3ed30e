import type { AgencyLogo } from '../agency-logo.ts';

export type PaymentMethod = 'fpx' | 'card' | 'ewallet';

/** An add charge: a fixed amount in sen, or a percentage of the amount (rounded half up to the sen). */
export type AddChargeRule = { fixedSen: number } | { percent: number };

/** What an agency (tenant) configures beyond its code, name and key. */
export interface AgencySettings {
  paymentCategories: string[];
  /** What payers read for a category, in English and Malay; a category without one shows its id. */
  categoryNames: Record<string, { en: string; ms: string }>;
  addCharges: Partial<Record<PaymentMethod, AddChargeRule>>;
  reportRecipients: string[];
  callbackHosts: string[];
  /** DuitNow QR merchant account; categoryCode (ISO 18245) defaults to 8661, religious organisations. */
  duitnow: { acquirerId?: string; merchantId?: string; name?: string; city?: string; categoryCode?: string };
  acceptUnsignedOrders: boolean;
  /** Shown on the payer pages, served by us at /agency-logo/<code>. */
  logo?: AgencyLogo;
}

export const DEFAULT_AGENCY_SETTINGS: AgencySettings = {
  paymentCategories: [],
  categoryNames: {},
  addCharges: {},
  reportRecipients: [],
  callbackHosts: [],
  duitnow: {},
  acceptUnsignedOrders: false,
};

export interface AgencyRow {
  code: string;
  name: string;
  createdAt: string;
  hasApiKey: boolean;
  apiKeyRotatedAt: string | null;
  settings: AgencySettings;
}

/**
 * Zakat agencies (tenants). The API key is only ever returned by apiKeyOf, for signature checks (and with a
 * callback's lease, to sign it: callbacks.claim).
 */
export interface AgenciesRepository {
  /** Creates an agency; false when the code is taken (nothing changes then). */
  create(input: {
    code: string;
    name: string;
    apiKey: string;
    settings?: Partial<AgencySettings>;
    now: Date;
  }): Promise<boolean>;

  get(code: string): Promise<AgencyRow | undefined>;

  list(): Promise<AgencyRow[]>;

  /** The agency's API key, to verify or make signatures; undefined when it has none. */
  apiKeyOf(code: string): Promise<string | undefined>;

  /** Replaces the API key at once (the old one stops working). False for an unknown agency. */
  rotateKey(code: string, apiKey: string, now: Date): Promise<boolean>;

  /** Changes the name and/or merges settings. False for an unknown agency. */
  update(code: string, change: { name?: string; settings?: Partial<AgencySettings> }): Promise<boolean>;
}
