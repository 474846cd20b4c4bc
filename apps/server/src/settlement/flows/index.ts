import type { TokenConfig } from '../../config/schema.ts';
import { erc20ApproveTransferFlow } from './erc20-approve-xfer.ts';
import { erc20Eip3009Flow } from './erc20-3009.ts';
import type { DelegateFlow, DelegateFlowName } from './port.ts';

export type { DelegateFlow, DelegateFlowName } from './port.ts';

/** Registered DELEGATE flows, most capable first: a token gets the first flow that serves it. */
const FLOWS: readonly DelegateFlow[] = [erc20Eip3009Flow, erc20ApproveTransferFlow];

/** The flow of a DELEGATE order paying with `token`. */
export function delegateFlowFor(token: TokenConfig): DelegateFlow {
  return FLOWS.find((f) => f.serves(token))!;
}

/** The flow named on an order, or undefined for a non-DELEGATE flow (ERC20_DIRECT, FIAT_…). */
export function delegateFlowNamed(name: string): DelegateFlow | undefined {
  return FLOWS.find((f) => f.name === name);
}

/** Flow names that the settlement worker settles (and the watcher does not invoice). */
export const DELEGATE_FLOW_NAMES: readonly DelegateFlowName[] = FLOWS.map((f) => f.name);

export function isDelegateFlow(name: string): boolean {
  return delegateFlowNamed(name) !== undefined;
}
