// Unclaimed transfers: money in the merchant's wallets that paid nothing in Tollgate (no order,
// machine payment or x402 settlement claimed it; docs/attribution.md, "One transfer, one purpose").
import { api } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { fmtTime, message, page, short, table } from './ui.ts';

interface Transfer {
  chain_id: number;
  tx_hash: string;
  log_index: number;
  block_time: string | null;
  token_contract: string;
  from_address: string;
  amount_wei: string;
}

export async function transfersPage(): Promise<HTMLElement> {
  const r = await api<{ data: Transfer[]; since: string }>('GET', 'unclaimed-transfers');
  return page(
    'Unclaimed transfers',
    h(
      'p',
      {},
      `Transfers to your wallets since ${fmtTime(r.since)} that no order, machine payment or x402 settlement claimed. ` +
        'Amounts are in the token’s smallest unit. Refund them to the sender, or ask the operator; a late or short payment of an order is listed on that order instead.',
    ),
    r.data.length === 0
      ? message('No unclaimed transfers.')
      : table(
          'Unclaimed transfers',
          ['Time', 'Chain', 'From', 'Amount (smallest unit)', 'Token', 'Transaction'],
          r.data.map((t) => [t.block_time ? fmtTime(t.block_time) : '—', String(t.chain_id), short(t.from_address), t.amount_wei, short(t.token_contract), h('code', { title: t.tx_hash }, `${short(t.tx_hash)}:${t.log_index}`)]),
        ),
  );
}
