// "Pay with <wallet>" on EVM chains: an EIP-1193 wallet (lib/wallet.ts) connected and switched to
// the option's chain; its `send` is an ERC-20 transfer of the bound order's terms. The Solana
// counterpart is solana-pay.ts; pay.ts's wallet flow (bind, send, progress) serves both.
import { networkName } from '../lib/chains.ts';
import type { PreparedWallet, Terms } from '../lib/terms.ts';
import type { PaymentOption } from '../lib/types.ts';
import { connect, ensureChain, sendTransfer, type Wallet } from '../lib/wallet.ts';

export function prepareEvmWallet(w: Wallet, say: (text: string) => void) {
  return async (option: PaymentOption): Promise<PreparedWallet> => {
    const from = await connect(w.provider);
    say(`Switch ${w.info.name} to ${networkName(option)} if it asks.`);
    await ensureChain(w.provider, option.chain_id);
    return {
      from,
      async send(t: Terms) {
        await ensureChain(w.provider, t.chainId);
        return sendTransfer(w.provider, { from, tokenContract: t.tokenContract, payTo: t.payTo, amountWei: t.amountWei });
      },
    };
  };
}
