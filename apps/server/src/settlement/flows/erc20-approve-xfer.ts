import { erc20Abi } from 'viem';
import type { DelegateFlow } from './port.ts';

/**
 * ERC20_APPROVE_XFER: tokens without EIP-3009 (USDT). The payer either transfers to the
 * settlement contract, or `approve`s it for the amount; the gateway then pulls and settles in ONE
 * transaction (`settleFromAllowance`), so a failing callback undoes the pull too.
 */
export const erc20ApproveTransferFlow: DelegateFlow = {
  name: 'ERC20_APPROVE_XFER',
  serves: () => true,
  relaysAuthorization: false,
  async canPull(client, o) {
    const [allowance, balance] = await Promise.all([
      client.readContract({ address: o.token, abi: erc20Abi, functionName: 'allowance', args: [o.payer, o.settlement] }),
      client.readContract({ address: o.token, abi: erc20Abi, functionName: 'balanceOf', args: [o.payer] }),
    ]);
    return allowance >= o.amount && balance >= o.amount;
  },
};
