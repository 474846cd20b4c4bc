import type { Config } from '../../config/schema.ts';
import type { PaymentPlanner } from '../../orders/ports.ts';
import { normalizeSolanaAddress } from '../addresses.ts';
import { FLOW as APPROVE_FLOW } from './delegate/repo.ts';

/**
 * The Solana family's rules of order creation (the order service's PaymentPlanner port, registered
 * by main.ts; docs/solana.md). An order is attributed by its reference key, not by payer:
 * `from_address` must be a base58 public key and is stored as given (base58 is case-sensitive), as
 * is a `token_contract` (the mint). DIRECT is SOL_DIRECT to the merchant wallet's token account;
 * DELEGATE is SOL_APPROVE_XFER: the payer approves the gateway's delegate key (SOLANA_DELEGATE_KEY),
 * which pulls and settles (delegate/). No callback can be registered on Solana.
 */
export function solanaPaymentPlanner(config: Pick<Config, 'solanaDelegate'>): PaymentPlanner {
  return {
    payer(raw) {
      const address = normalizeSolanaAddress(raw);
      if (address === undefined) return { kind: 'refused', code: 'invalid_request', message: 'from_address must be a base58 Solana public key on a Solana chain', param: 'from_address' };
      return { kind: 'payer', address };
    },
    tokenContract: (raw) => raw,
    // A signature is case-sensitive base58: stored as given.
    transactionRef: (raw) => raw,
    async plan(req) {
      if (req.receiveType === 'DIRECT') return { kind: 'plan', plan: { flow: 'SOL_DIRECT' } };
      if (!config.solanaDelegate) return { kind: 'refused', code: 'delegate_not_enabled', message: `DELEGATE settlement is not set up on chain ${req.chainId}`, param: 'chain_id' };
      if (req.callbackCalldata !== undefined) return { kind: 'refused', code: 'callback_not_registered', message: `no callback can be registered for chain ${req.chainId}`, param: 'callback_calldata' };
      return { kind: 'plan', plan: { flow: APPROVE_FLOW, payToAddress: config.solanaDelegate.address } };
    },
  };
}
