import { isAddress } from 'viem';
import { chainById } from '../../chain/registry.ts';
import { isRefusal, parsePositiveDecimal } from '../../checkout/fields.ts';
import type { QuickPayContext } from './port.ts';
import type { SessionWithOrder } from '../repo.ts';
import type { QuickPayRail, QuickPayStatus } from './port.ts';
import { quickpayOrderRef, refused, sessionStatusFromOrder } from './session-order.ts';

/**
 * The chain/token pairs a link offers: its own list, or every merchant wallet whose token is
 * configured. Each comes with the token's contract and decimals from the configuration.
 */
export async function linkPaymentOptions(deps: QuickPayContext, link: { merchant_id: string; options: { chain_id: number; token_symbol: string }[] }) {
  const wallets = await deps.merchants.listWallets(link.merchant_id);
  return wallets.filter((w) => link.options.length === 0 || link.options.some((o) => o.chain_id === w.chain_id && o.token_symbol === w.token_symbol));
}

/**
 * The crypto rail: the session's DIRECT order is created when the session is, so the answer to
 * session creation carries the payment terms (docs/quickpay.md). Its status follows the order:
 * PAYMENT_CONFIRMED when the order is PAYMENT_CONFIRMED or INVOICED (docs/quickpay.md).
 */
export const cryptoRail: QuickPayRail = {
  name: 'crypto',

  async choose(deps, { link, amount, request }) {
    if (request.chain_id === undefined || request.token_symbol === undefined) return refused('invalid_request', 'chain_id and token_symbol are required for the crypto rail', request.chain_id === undefined ? 'chain_id' : 'token_symbol');
    // The payer's address in its chain family's form (EVM: checksum checked, stored lower-case;
    // Solana: a base58 public key, kept as given).
    const family = chainById(deps.config, request.chain_id)?.family;
    const from = request.from_address === undefined ? undefined : family ? family.normalizeAddress(request.from_address) : isAddress(request.from_address) ? request.from_address.toLowerCase() : undefined;
    if (from === undefined) {
      return refused('invalid_request', family?.kind === 'solana' ? 'from_address (the paying wallet) must be a base58 Solana public key' : 'from_address (the paying wallet) must be a valid EVM address (EIP-55 checksum when mixed case)', 'from_address');
    }
    const options = await linkPaymentOptions(deps, link);
    const option = options.find((o) => o.chain_id === request.chain_id && o.token_symbol === request.token_symbol);
    if (!option) {
      return options.some((o) => o.chain_id === request.chain_id)
        ? refused('token_not_supported', `this link accepts no ${request.token_symbol} on chain ${request.chain_id}`, 'token_symbol')
        : refused('chain_not_supported', `this link accepts no payment on chain ${request.chain_id}`, 'chain_id');
    }
    // Exact conversion into the token's smallest unit happens in open(); check it fits here so a
    // refusal leaves nothing stored.
    const units = parsePositiveDecimal(amount, option.decimals, 'amount');
    if (isRefusal(units)) return refused('invalid_amount', `${units.message} (${option.token_symbol} has ${option.decimals} decimals)`, 'amount');
    return { chainId: option.chain_id, tokenSymbol: option.token_symbol, fromAddress: from };
  },

  async open(deps, s) {
    const token = deps.merchants.resolveToken(s.chain_id!, s.token_symbol!);
    if (typeof token === 'string') return refused(token, `token ${s.token_symbol} is not configured on chain ${s.chain_id}`, 'token_symbol');
    const units = parsePositiveDecimal(s.amount, token.decimals, 'amount');
    if (isRefusal(units)) return refused('invalid_amount', units.message, 'amount');
    const out = await deps.orders.createOrder({
      merchantId: s.merchant_id,
      receiveType: 'DIRECT',
      dappOrderId: quickpayOrderRef(s.id),
      chainId: s.chain_id!,
      tokenSymbol: s.token_symbol!,
      fromAddress: s.from_address!,
      amountWei: units.toString(),
      expiresAt: s.expires_at,
      // The payer's own unpaid session with the same terms gives way (orders/supersede.ts).
      supersede: true,
    });
    if (out.kind === 'refused') return refused(out.code, out.message, out.param);
    return { kind: 'opened', orderId: out.order.id, expiresAt: out.order.expires_at };
  },

  status(v: SessionWithOrder, nowMs: number): QuickPayStatus {
    // A transfer seen keeps the session open past the window: it is confirming.
    return sessionStatusFromOrder(v, nowMs, { PAYMENT_CONFIRMED: 'PAYMENT_CONFIRMED', INVOICED: 'PAYMENT_CONFIRMED' });
  },

  terms(v, config) {
    const o = v.order;
    if (!o) return undefined;
    // A Solana order is paid through its Solana Pay transfer request, whose reference key
    // attributes the payment (docs/solana.md); EVM families have none.
    const c = chainById(config, o.chain_id);
    const url = c?.family.paymentUrl?.(c.chain, { ...o, flow: o.flow, dapp_order_id: o.id });
    return {
      order_id: o.id,
      chain_id: o.chain_id,
      token_symbol: o.token_symbol,
      token_contract: o.token_contract,
      decimals: o.decimals,
      pay_to_address: o.pay_to_address,
      amount_wei: o.amount_wei,
      expires_at: Math.floor(o.expires_at.getTime() / 1000),
      ...(url ? { payment_url: url } : {}),
    };
  },
};
