// "Pay with <wallet>" on Solana: Wallet Standard wallets (lib/solana-wallets.ts) found on the page,
// their buttons, and what paying with one does. The page's CSP lets it reach no Solana RPC, so the
// page never builds or sends a transaction itself: it asks Tollgate for the order's transaction
// (the session's Solana Pay transaction request, `POST …/solana-pay { account }`), and the wallet
// signs AND sends it (`solana:signAndSendTransaction`; the wallet has its own connection). The
// transaction carries the order's reference key, so the watcher recognises it as it does a QR payment.
import type { CheckoutApi } from '../lib/api.ts';
import { base58, connectSolana, discoverSolanaWallets, fromBase64, signAndSend, type SolanaWallet } from '../lib/solana-wallets.ts';
import type { PreparedWallet } from '../lib/terms.ts';
import type { PaymentOption } from '../lib/types.ts';
import { h } from './dom.ts';

let found: SolanaWallet[] = [];

/** Starts discovery; `onChange` runs whenever a Solana wallet registers or leaves. */
export function watchSolanaWallets(onChange: () => void): void {
  discoverSolanaWallets(window as unknown as Parameters<typeof discoverSolanaWallets>[0], (list) => {
    found = list;
    onChange();
  });
}

/** Connects `w` on the option's cluster; the returned `send` has the wallet sign and send the bound order's transaction (signature in base58). */
async function prepare(api: CheckoutApi, w: SolanaWallet, chain: string): Promise<PreparedWallet> {
  const account = await connectSolana(w.wallet, chain);
  return {
    from: account.address,
    async send() {
      const { transaction } = await api.solanaTransaction(account.address);
      const signature = await signAndSend(w.wallet, { account, chain, transaction: fromBase64(transaction), options: { commitment: 'confirmed' } });
      return base58(signature);
    },
  };
}

/**
 * The wallet area of a Solana option: a button per wallet that can pay on the option's cluster,
 * and the QR / link alternative. `pay(name, prepare)` is pay.ts's wallet flow (bind, then send).
 */
export function solanaWalletArea(option: PaymentOption, api: CheckoutApi, busy: boolean, pay: (name: string, prepare: () => Promise<PreparedWallet>) => void) {
  const chain = option.wallet_chain;
  const usable = chain ? found.filter((w) => w.wallet.chains.includes(chain)) : [];
  const qr = h('p', { class: 'muted' }, usable.length ? 'Or pay on Solana with the QR code or link below (any Solana Pay wallet).' : 'Pay on Solana with the QR code or link below (any Solana Pay wallet).');
  return [
    ...usable.map((w) =>
      h(
        'button',
        { type: 'button', class: 'primary wallet', disabled: busy, 'data-wallet': w.name, onclick: () => pay(w.name, () => prepare(api, w, chain!)) },
        w.icon ? h('img', { src: w.icon, alt: '', width: 24, height: 24 }) : undefined,
        `Pay with ${w.name}`,
      ),
    ),
    qr,
  ];
}
