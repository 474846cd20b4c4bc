import type { Hex, PublicClient } from 'viem';
import type { TokenConfig } from '../../config/schema.ts';

/**
 * A DELEGATE flow: how a payer may fund a DELEGATE order besides a plain `transfer` to the
 * settlement contract (which always works), and where the settlement takes the funds from.
 * One file per flow (erc20-3009.ts, erc20-approve-xfer.ts), registered in index.ts; services ask
 * the registry and never branch on a flow name. A later SOL_APPROVE_XFER is a new file here.
 */
export interface DelegateFlow {
  readonly name: DelegateFlowName;
  /** Whether this flow serves the token (decided by token capability, `tokens[].eip3009`). */
  serves(token: TokenConfig): boolean;
  /** Whether the payer may submit a signed EIP-3009 authorization that the gateway relays. */
  readonly relaysAuthorization: boolean;
  /**
   * For a live order whose payment was not seen as a transfer: whether the gateway can take the
   * funds itself now (approve-and-pull). `false` for flows without such a path.
   */
  canPull(client: PublicClient, order: PullableOrder): Promise<boolean>;
}

export type DelegateFlowName = 'ERC20_3009' | 'ERC20_APPROVE_XFER';

interface PullableOrder {
  token: Hex;
  payer: Hex;
  amount: bigint;
  /** The settlement contract (the spender the payer approved). */
  settlement: Hex;
}
