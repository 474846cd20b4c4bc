// Machine payments (mpp: a signed receipt per paid request) and x402 settlements (the settlement
// transaction is the receipt), newest first.
import { api } from './api.ts';
import { h } from '@tollgate/checkout-ui/dom';
import { fmtTime, page, short, table } from './ui.ts';

const tx = (hash: string, url?: string) => (url ? h('a', { href: url, rel: 'noopener noreferrer', target: '_blank', title: hash }, short(hash, 8)) : h('code', { title: hash }, short(hash, 8)));

export async function machinePage(): Promise<HTMLElement> {
  const [mpp, x402] = await Promise.all([api<any>('GET', 'mpp/payments'), api<any>('GET', 'x402/settlements')]);
  return page(
    'Machine payments',
    h('p', {}, 'Paid requests of your machine-payment routes with their signed receipts (verify with /.well-known/jwks.json), and x402 settlements to your wallets.'),
    h('h2', {}, 'Machine payments (mpp)'),
    mpp.data.length
      ? table(
          'Machine payments',
          ['Paid', 'Route', 'Amount (smallest unit)', 'Chain', 'Payer', 'Transaction', 'Receipt'],
          mpp.data.map((p: any) => [
            fmtTime(p.paid_at),
            p.route_canonical,
            p.amount_wei,
            String(p.chain_id),
            h('code', { title: p.payer }, short(p.payer, 6)),
            tx(p.tx_hash, p.explorer_url),
            h(
              'details',
              {},
              h('summary', {}, `Receipt ${short(p.challenge_id, 6)}`),
              h('code', { class: 'secret', 'data-receipt': p.challenge_id }, p.receipt),
              h('button', { type: 'button', onclick: () => void navigator.clipboard?.writeText(p.receipt) }, 'Copy receipt'),
            ),
          ]),
        )
      : h('p', {}, 'No machine payments yet.'),
    h('h2', {}, 'x402 settlements'),
    x402.data.length
      ? table(
          'x402 settlements',
          ['Time', 'Network', 'Amount (smallest unit)', 'Token', 'Payer', 'Status', 'Transaction'],
          x402.data.map((x: any) => [fmtTime(x.created_at), x.network, x.amount_wei, x.token_symbol ?? short(x.token_contract, 6), h('code', { title: x.payer }, short(x.payer, 6)), x.status, tx(x.tx_hash, x.explorer_url)]),
        )
      : h('p', {}, 'No x402 settlements yet.'),
  );
}
