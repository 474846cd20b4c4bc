import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sentTx, termsFor } from '../../src/lib/terms.ts';

const OPTIONS = [
  { chain_id: 137, token_symbol: 'USDC', token_contract: '0x' + 'aa'.repeat(20), decimals: 6, amount_wei: '12500000' },
  { chain_id: 137, token_symbol: 'USDT', token_contract: '0x' + 'bb'.repeat(20), decimals: 6, amount_wei: '12500000', chain_name: 'Polygon PoS', explorer_url: 'https://polygonscan.com' },
];
const ORDER = { order_id: 'ord_1', chain_id: 137, token_symbol: 'USDT', pay_to_address: '0x' + 'cc'.repeat(20), amount_wei: '12500000', expires_at: 1_800_000_000 };

test('termsFor: the public view order gets contract and decimals from its payment option', () => {
  assert.deepEqual(termsFor(OPTIONS, ORDER), {
    orderId: 'ord_1',
    chainId: 137,
    chainName: 'Polygon PoS',
    explorerUrl: 'https://polygonscan.com',
    tokenSymbol: 'USDT',
    tokenContract: '0x' + 'bb'.repeat(20),
    decimals: 6,
    payTo: '0x' + 'cc'.repeat(20),
    amountWei: '12500000',
    expiresAt: 1_800_000_000,
  });
  // A bind answer carries its own token_contract: it wins.
  assert.equal(termsFor(OPTIONS, { ...ORDER, token_contract: '0x' + 'dd'.repeat(20) })?.tokenContract, '0x' + 'dd'.repeat(20));
  // An option without configuration data: "Chain <id>", no explorer.
  const usdc = termsFor(OPTIONS, { ...ORDER, token_symbol: 'USDC' })!;
  assert.equal(usdc.chainName, 'Chain 137');
  assert.equal('explorerUrl' in usdc, false);
  assert.equal(termsFor(OPTIONS, { ...ORDER, chain_id: 1 }), undefined);
  assert.equal(termsFor(OPTIONS, { ...ORDER, token_symbol: 'DAI' }), undefined);
});

test('sentTx: per-order hash in session storage; tolerant of bad values and disabled storage', () => {
  const map = new Map<string, string>();
  const storage = { getItem: (k: string) => map.get(k) ?? null, setItem: (k: string, v: string) => void map.set(k, v) };
  const hash = '0x' + 'ab'.repeat(32);
  assert.equal(sentTx.get(storage, 'ord_1'), undefined);
  sentTx.set(storage, 'ord_1', hash);
  assert.equal(sentTx.get(storage, 'ord_1'), hash);
  assert.equal(sentTx.get(storage, 'ord_2'), undefined);
  map.set('tollgate:tx:ord_3', '<script>');
  assert.equal(sentTx.get(storage, 'ord_3'), undefined);
  const broken = {
    getItem: () => {
      throw new Error('SecurityError');
    },
    setItem: () => {
      throw new Error('QuotaExceeded');
    },
  };
  assert.equal(sentTx.get(broken, 'ord_1'), undefined);
  assert.doesNotThrow(() => sentTx.set(broken, 'ord_1', hash));
  assert.equal(sentTx.get(undefined, 'ord_1'), undefined);
  // A Solana signature (64 bytes, base58) is kept too; a base58 string too short to be one is not.
  const sig = '5'.repeat(87) + 'a';
  sentTx.set(storage, 'ord_4', sig);
  assert.equal(sentTx.get(storage, 'ord_4'), sig);
  map.set('tollgate:tx:ord_5', 'abc');
  assert.equal(sentTx.get(storage, 'ord_5'), undefined);
});
