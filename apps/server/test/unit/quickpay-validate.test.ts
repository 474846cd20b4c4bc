import assert from 'node:assert/strict';
import { test } from 'node:test';
import { draftLink, draftProduct, parseOptions, parseRails, sessionAmount } from '../../src/quickpay/validate.ts';

const wallets = [
  { chain_id: 1, token_symbol: 'USDC' },
  { chain_id: 137, token_symbol: 'USDT' },
];
const ctx = { wallets, cardEnabled: false, product: { price: '9.99', fiat_amount: null }, nowMs: 1_700_000_000_000 };

test('draftProduct: trimmed text, exact decimal price, https image, fiat pair, inventory', () => {
  const p = draftProduct({ name: '  Beans ', price: '12.500000', image_url: 'https://x.example/a.png', inventory: 3 });
  assert.ok(!('kind' in p));
  assert.deepEqual([p.name, p.price, p.image_url, p.inventory, p.active], ['Beans', '12.500000', 'https://x.example/a.png', 3, true]);
  for (const [body, param] of [
    [{ name: 'x', price: '0' }, 'price'],
    [{ name: 'x', price: '1.0000001' }, 'price'],
    [{ name: 'x', price: '٣' }, 'price'],
    [{ name: 'x' }, 'price'],
    [{ name: 'x', price: '1', image_url: 'javascript:alert(1)' }, 'image_url'],
    [{ name: 'x', price: '1', fiat_currency: 'USD', fiat_amount: '1.001' }, 'fiat_amount'],
    [{ name: 'x', price: '1', inventory: -2 }, 'inventory'],
    [{ name: 'a\u0000b', price: '1' }, 'name'],
  ] as const) {
    const r = draftProduct(body as never);
    assert.equal('kind' in r && r.param, param, JSON.stringify(body));
  }
  // an update keeps what is absent; "" removes the price only when a fiat amount remains
  const base = draftProduct({ name: 'B', price: '2', fiat_currency: 'eur', fiat_amount: '2.00' });
  assert.ok(!('kind' in base));
  const u = draftProduct({ price: '' }, base);
  assert.ok(!('kind' in u));
  assert.deepEqual([u.name, u.price, u.fiat_currency], ['B', null, 'EUR']);
});

test('parseRails and parseOptions', () => {
  assert.deepEqual(parseRails(undefined), ['crypto']);
  assert.deepEqual(parseRails('crypto,card'), ['crypto', 'card']);
  assert.equal((parseRails('crypto,crypto') as { param: string }).param, 'payment_rails');
  // fiat is the card rail's other name (the checkout sessions' word): accepted, stored as card.
  assert.deepEqual(parseRails('fiat,crypto'), ['card', 'crypto']);
  assert.match((parseRails('card,fiat') as { message: string }).message, /card rail twice/);
  assert.equal((parseRails('cash') as { kind: string }).kind, 'refused');
  assert.deepEqual(parseOptions('1:USDC, 137:USDT,1:USDC', wallets), wallets);
  assert.equal((parseOptions('1:USDT', wallets) as { code: string }).code, 'wallet_not_found');
  assert.equal((parseOptions('01:USDC', wallets) as { param: string }).param, 'options');
});

test('draftLink: fixed or any-amount, limits, expiry; an update never changes what is sold', () => {
  const fixed = draftLink({ product_id: 'prd_x', max_payments: 5 }, ctx);
  assert.ok(!('kind' in fixed));
  assert.deepEqual([fixed.product_id, fixed.min_amount, fixed.max_payments], ['prd_x', null, 5]);
  const any = draftLink({ min_amount: '0.5', max_amount: '100', expires_at: 1_700_000_600 }, ctx);
  assert.ok(!('kind' in any));
  assert.deepEqual([any.min_amount, any.max_amount, any.expires_at?.getTime()], ['0.5', '100', 1_700_000_600_000]);
  assert.equal((draftLink({ min_amount: '2', max_amount: '1' }, ctx) as { param: string }).param, 'max_amount');
  assert.equal((draftLink({ min_amount: '1', max_amount: '2', expires_at: 1_600_000_000 }, ctx) as { param: string }).param, 'expires_at');
  assert.equal((draftLink({ product_id: 'prd_x', payment_rails: 'card' }, ctx) as { code: string }).code, 'rail_not_enabled');
  assert.equal((draftLink({ product_id: 'prd_x', min_amount: '1' }, ctx) as { param: string }).param, 'min_amount');
  assert.equal((draftLink({ product_id: 'prd_y' }, ctx, any) as { param: string }).param, 'product_id');
  const off = draftLink({ active: false, max_payments: -1 }, ctx, fixed);
  assert.ok(!('kind' in off));
  assert.deepEqual([off.active, off.max_payments, off.product_id], [false, null, 'prd_x']);
});

test('sessionAmount: the fixed price, or a payer amount within [min, max] compared exactly', () => {
  const fixed = { min_amount: null, max_amount: null };
  assert.equal(sessionAmount(fixed, '9.99', undefined), '9.99');
  assert.equal(sessionAmount(fixed, '9.99', '9.990'), '9.99');
  assert.equal((sessionAmount(fixed, '9.99', '9.98') as { param: string }).param, 'amount');
  const range = { min_amount: '1', max_amount: '2.5' };
  assert.equal(sessionAmount(range, null, '2.500000'), '2.500000');
  assert.equal(sessionAmount(range, null, '1'), '1');
  assert.equal((sessionAmount(range, null, '2.500001') as { kind: string }).kind, 'out_of_range');
  assert.equal((sessionAmount(range, null, '0.999999') as { kind: string }).kind, 'out_of_range');
  assert.equal((sessionAmount(range, null, undefined) as { param: string }).param, 'amount');
  assert.equal((sessionAmount(range, null, '1e1') as { code: string }).code, 'invalid_amount');
});
