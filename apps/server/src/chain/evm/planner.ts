import type { DelegatePlanner, PaymentPlanner } from '../../orders/ports.ts';
import { normalizeEvmAddress } from '../addresses.ts';

/**
 * The EVM family's rules of order creation (the order service's PaymentPlanner port, registered
 * by main.ts): the payer is an EVM address (EIP-55 checked when mixed case, stored lowercase) and
 * never the zero address; a DIRECT order is ERC20_DIRECT to the merchant's wallet; a DELEGATE
 * order is planned by the settlement contract's DELEGATE mode (settlement/delegate.ts), when the
 * deployment has one.
 */
export function evmPaymentPlanner(delegate: DelegatePlanner | undefined): PaymentPlanner {
  return {
    payer(raw) {
      const address = normalizeEvmAddress(raw);
      if (address === undefined) return { kind: 'refused', code: 'invalid_request', message: 'from_address must be a valid EVM address (EIP-55 checksum when mixed case)', param: 'from_address' };
      // Transfers from the zero address are mints: no payer sends them, and matching one to an
      // order would credit whoever minted tokens to the merchant's wallet.
      if (BigInt(address) === 0n) return { kind: 'refused', code: 'zero_from_address', message: 'from_address must not be the zero address (transfers from it are token mints)', param: 'from_address' };
      return { kind: 'payer', address };
    },
    tokenContract: (raw) => raw.toLowerCase(),
    // A 0x hash is stored lowercase; anything else is no EVM hash and stays as given (the default
    // planner of a chain no family has must not alter another family's reference).
    transactionRef: (raw) => (raw.startsWith('0x') ? raw.toLowerCase() : raw),
    async plan(req) {
      if (req.receiveType === 'DIRECT') return { kind: 'plan', plan: { flow: 'ERC20_DIRECT' } };
      if (!delegate) return { kind: 'refused', code: 'delegate_not_enabled', message: 'DELEGATE mode is not available on this deployment', param: 'merchant_id' };
      return delegate.planOrder(req.merchantId, req.chainId, req.token, req.callbackCalldata);
    },
  };
}
