import type { Config } from '../config/schema.ts';
import type { Queryable } from '../db/database.ts';

/**
 * Whom the facilitator settles for. Its executor key pays the gas of every settlement, so by
 * default it settles only payments to this deployment's merchants: a `payTo` that is a receiving
 * wallet of a merchant here (`merchant_wallets`, on the payment's chain) or the chain's settlement
 * contract. Anyone else's payments — a stranger pointing a resource server at this gateway — are
 * refused unless the operator lists their address (`x402.facilitate_for`, env
 * `X402_FACILITATE_FOR`; `*` settles for anyone, the behaviour of a public facilitator).
 */
export class PayToScope {
  readonly #any: boolean;
  readonly #listed: ReadonlySet<string>;
  private readonly db: Queryable;
  private readonly config: Config;

  constructor(db: Queryable, config: Config) {
    this.db = db;
    this.config = config;
    const list = config.x402FacilitateFor ?? [];
    this.#any = list.includes('*');
    this.#listed = new Set(list.map((a) => a.toLowerCase()));
  }

  /** Whether this gateway settles payments to `payTo` (lowercase 0x address) on `chainId`. */
  async serves(chainId: number, payTo: string): Promise<boolean> {
    if (this.#any || this.#listed.has(payTo)) return true;
    if (this.config.chains.find((c) => c.chainId === chainId)?.settlementContract === payTo) return true;
    const { rows } = await this.db.query('SELECT 1 FROM merchant_wallets WHERE chain_id = $1 AND address = $2 LIMIT 1', [chainId, payTo]);
    return rows.length > 0;
  }
}
