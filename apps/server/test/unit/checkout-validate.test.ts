import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLineItems, parseMetadata, type Refusal } from '../../src/checkout/fields.ts';
import { isReturnUrlAllowed, returnUrlProblem } from '../../src/checkout/return-urls.ts';
import { hostedUrl } from '../../src/checkout/service.ts';
import { clampExpiresIn, draftSession, parsePaymentRails, type CreateSessionBody, type MerchantContext, type SessionDraft } from '../../src/checkout/validate.ts';

const NOW = 1_750_000_000_123;
const USDC = { chain_id: 1, token_symbol: 'USDC', token_contract: '0x' + '1'.repeat(40), decimals: 6 };
const DAI = { chain_id: 1, token_symbol: 'DAI', token_contract: '0x' + '2'.repeat(40), decimals: 18 };

function merchant(over: Partial<MerchantContext> = {}): MerchantContext {
  return { cardEnabled: true, returnUrls: ['https://shop.example/thanks', 'https://shop.example:8443/'], wallets: [USDC, DAI], ...over };
}
function draft(body: Partial<CreateSessionBody>, m = merchant()): SessionDraft {
  const out = draftSession({ checkout_type: 'DIRECT', price: '9.99', ...body }, m, NOW);
  assert.equal(out.kind, 'ok', JSON.stringify(out));
  return (out as { draft: SessionDraft }).draft;
}
function refusal(body: Partial<CreateSessionBody>, m = merchant()): Refusal {
  const out = draftSession({ checkout_type: 'DIRECT', ...body } as CreateSessionBody, m, NOW);
  assert.equal(out.kind, 'refused', JSON.stringify(out));
  return out as Refusal;
}

describe('checkout create rules (draftSession)', () => {
  it('a minimal crypto session: price converted exactly per token, default rails and expiry', () => {
    const d = draft({ price: '9.99' });
    assert.deepEqual(d.paymentRails, ['crypto']);
    assert.deepEqual(
      d.paymentOptions.map((o) => [o.token_symbol, o.amount_wei]),
      [
        ['USDC', '9990000'],
        ['DAI', '9990000000000000000'],
      ],
    );
    assert.equal(d.expiresAt.getTime(), (Math.floor(NOW / 1000) + 3600) * 1000);
    assert.deepEqual([d.lineItems, d.publicMetadata, d.privateMetadata], [[], {}, {}]);
  });

  it('never goes through a float: 0.1 + 0.2 style prices are exact', () => {
    assert.equal(draft({ price: '0.3' }).paymentOptions[1]!.amount_wei, '300000000000000000');
    assert.equal(draft({ price: '1234567890.123456' }).paymentOptions[0]!.amount_wei, '1234567890123456');
  });

  it('fiat with the card rail, currency case-insensitive, minor units respected', () => {
    const d = draft({ payment_rails: 'crypto,fiat', fiat_currency: 'jpy', fiat_amount: '1500' });
    assert.deepEqual([d.paymentRails, d.fiatCurrency, d.fiatAmount], [['crypto', 'fiat'], 'JPY', '1500']);
    const card = draft({ payment_rails: 'fiat', price: undefined, fiat_currency: 'KWD', fiat_amount: '1.234' });
    assert.deepEqual([card.price, card.paymentOptions], [undefined, []]);
  });

  it('client_reference_id is trimmed; blank is absent', () => {
    assert.equal(draft({ client_reference_id: '  cart-7  ' }).clientReferenceId, 'cart-7');
    assert.equal(draft({ client_reference_id: '   ' }).clientReferenceId, undefined);
    assert.equal(draft({ client_reference_id: ` ${'x'.repeat(200)} ` }).clientReferenceId?.length, 200);
  });

  it('expires_in is clamped into [300, 86400]', () => {
    assert.deepEqual([clampExpiresIn(undefined), clampExpiresIn(1), clampExpiresIn(-5), clampExpiresIn(300), clampExpiresIn(86_401), clampExpiresIn(1e12)], [3600, 300, 300, 300, 86_400, 86_400]);
    assert.equal(draft({ expires_in: 10 }).expiresAt.getTime() / 1000, Math.floor(NOW / 1000) + 300);
  });

  it('return URLs on the allowlist are kept', () => {
    const d = draft({ success_url: 'https://shop.example/thanks/7?ref=a#x', cancel_url: 'https://shop.example:8443/cart' });
    assert.deepEqual([d.successUrl, d.cancelUrl], ['https://shop.example/thanks/7?ref=a#x', 'https://shop.example:8443/cart']);
  });

  const refusals: [string, Partial<CreateSessionBody>, string, string, Partial<MerchantContext>?][] = [
    ['checkout_type DELEGATE (GOAT Network SDK: createDelegateCheckoutSession)', { checkout_type: 'DELEGATE', price: '1' }, 'delegate_checkout_unsupported', 'checkout_type'],
    ['checkout_type other than DIRECT or DELEGATE', { checkout_type: 'direct', price: '1' }, 'invalid_request', 'checkout_type'],
    ['a DIRECT session with chain_id (a DELEGATE field)', { price: '1', chain_id: 31337 }, 'invalid_request', 'chain_id'],
    ['a DIRECT session with fixed_amount_wei (a DELEGATE field)', { price: '1', fixed_amount_wei: '1000000' }, 'invalid_request', 'fixed_amount_wei'],
    ['a DIRECT session with callback_calldata (a DELEGATE field)', { price: '1', callback_calldata: '0x00' }, 'invalid_request', 'callback_calldata'],
    ['a DIRECT session with acceptable_tokens (a DELEGATE field)', { price: '1', acceptable_tokens: '[]' }, 'invalid_request', 'acceptable_tokens'],
    ['an unknown rail', { payment_rails: 'crypto,bank', price: '1' }, 'invalid_request', 'payment_rails'],
    ['a repeated rail', { payment_rails: 'crypto,crypto', price: '1' }, 'invalid_request', 'payment_rails'],
    ['an empty rail entry', { payment_rails: 'crypto,', price: '1' }, 'invalid_request', 'payment_rails'],
    ['a JSON-array-looking rails string', { payment_rails: '["crypto"]', price: '1' }, 'invalid_request', 'payment_rails'],
    ['fiat without the card rail', { payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '1' }, 'rail_not_enabled', 'payment_rails', { cardEnabled: false }],
    ['crypto without a price', {}, 'invalid_amount', 'price'],
    ['crypto with no wallet', { price: '1' }, 'wallet_not_found', 'payment_rails', { wallets: [] }],
    ['a zero price', { price: '0' }, 'invalid_amount', 'price'],
    ['a negative price', { price: '-1' }, 'invalid_amount', 'price'],
    ['an exponent price', { price: '1e3' }, 'invalid_amount', 'price'],
    ['a price with a bare dot', { price: '.5' }, 'invalid_amount', 'price'],
    ['a price with more fraction digits than USDC has', { price: '0.0000001' }, 'invalid_amount', 'price'],
    ['a price beyond uint256', { price: '9'.repeat(80) }, 'invalid_amount', 'price'],
    ['a price on a card-only session', { payment_rails: 'fiat', price: '1', fiat_currency: 'USD', fiat_amount: '1' }, 'invalid_request', 'price'],
    ['fiat without a currency', { payment_rails: 'fiat', fiat_amount: '1' }, 'invalid_request', 'fiat_currency'],
    ['fiat without an amount', { payment_rails: 'fiat', fiat_currency: 'USD' }, 'invalid_amount', 'fiat_amount'],
    ['an unsupported currency', { payment_rails: 'fiat', fiat_currency: 'XYZ', fiat_amount: '1' }, 'invalid_request', 'fiat_currency'],
    ['a four-letter currency', { payment_rails: 'fiat', fiat_currency: 'USDC', fiat_amount: '1' }, 'invalid_request', 'fiat_currency'],
    ['JPY with a fraction', { payment_rails: 'fiat', fiat_currency: 'JPY', fiat_amount: '10.5' }, 'invalid_amount', 'fiat_amount'],
    ['USD with three fraction digits', { payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '1.005' }, 'invalid_amount', 'fiat_amount'],
    ['a zero fiat amount', { payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '0.00' }, 'invalid_amount', 'fiat_amount'],
    ['fiat_currency without the fiat rail', { price: '1', fiat_currency: 'USD' }, 'invalid_request', 'fiat_currency'],
    ['fiat_amount without the fiat rail', { price: '1', fiat_amount: '1' }, 'invalid_request', 'fiat_amount'],
    ['a client_reference_id of 201 characters', { price: '1', client_reference_id: 'x'.repeat(201) }, 'invalid_request', 'client_reference_id'],
    ['line items that are not JSON', { price: '1', line_items_json: '[{' }, 'invalid_request', 'line_items_json'],
    ['line items as an object', { price: '1', line_items_json: '{"name":"a"}' }, 'invalid_request', 'line_items_json'],
    ['a line item without a name', { price: '1', line_items_json: '[{"quantity":1}]' }, 'invalid_request', 'line_items_json'],
    ['a line item with an empty name', { price: '1', line_items_json: '[{"name":"  ","quantity":1}]' }, 'invalid_request', 'line_items_json'],
    ['a line item name of 201 characters', { price: '1', line_items_json: JSON.stringify([{ name: 'n'.repeat(201), quantity: 1 }]) }, 'invalid_request', 'line_items_json'],
    ['a zero quantity', { price: '1', line_items_json: '[{"name":"a","quantity":0}]' }, 'invalid_request', 'line_items_json'],
    ['a fractional quantity', { price: '1', line_items_json: '[{"name":"a","quantity":1.5}]' }, 'invalid_request', 'line_items_json'],
    ['a quantity as a string', { price: '1', line_items_json: '[{"name":"a","quantity":"1"}]' }, 'invalid_request', 'line_items_json'],
    ['a numeric item amount', { price: '1', line_items_json: '[{"name":"a","quantity":1,"amount":1}]' }, 'invalid_amount', 'line_items_json'],
    ['a negative item amount', { price: '1', line_items_json: '[{"name":"a","quantity":1,"amount":"-1"}]' }, 'invalid_amount', 'line_items_json'],
    ['an unknown item field', { price: '1', line_items_json: '[{"name":"a","quantity":1,"sku":"x"}]' }, 'invalid_request', 'line_items_json'],
    ['101 line items', { price: '1', line_items_json: JSON.stringify(Array.from({ length: 101 }, () => ({ name: 'a', quantity: 1 }))) }, 'invalid_request', 'line_items_json'],
    ['amounts that do not add up to the price', { price: '10', line_items_json: '[{"name":"a","quantity":2,"amount":"4.99"}]' }, 'invalid_amount', 'line_items_json'],
    ['amounts that add up to the price only as a total (not per unit)', { price: '10', line_items_json: '[{"name":"a","quantity":2,"amount":"10"}]' }, 'invalid_amount', 'line_items_json'],
    ['card-only items not adding up to fiat_amount', { payment_rails: 'fiat', fiat_currency: 'USD', fiat_amount: '5.00', line_items_json: '[{"name":"a","quantity":1,"amount":"4"}]' }, 'invalid_amount', 'line_items_json'],
    ['public metadata that is an array', { price: '1', public_metadata_json: '[1]' }, 'invalid_request', 'public_metadata_json'],
    ['public metadata that is not JSON', { price: '1', public_metadata_json: '{' }, 'invalid_request', 'public_metadata_json'],
    ['a reserved metadata key', { price: '1', public_metadata_json: '{"tollgate_id":"x"}' }, 'invalid_request', 'public_metadata_json'],
    ['a reserved metadata key in any case', { price: '1', private_metadata_json: '{"TollGate":"x"}' }, 'invalid_request', 'private_metadata_json'],
    ['a metadata key of 41 characters', { price: '1', public_metadata_json: JSON.stringify({ ['k'.repeat(41)]: 'v' }) }, 'invalid_request', 'public_metadata_json'],
    ['an empty metadata key', { price: '1', public_metadata_json: '{"":"v"}' }, 'invalid_request', 'public_metadata_json'],
    ['51 metadata keys', { price: '1', private_metadata_json: JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']))) }, 'invalid_request', 'private_metadata_json'],
    ['a metadata string of 501 characters', { price: '1', public_metadata_json: JSON.stringify({ k: 'v'.repeat(501) }) }, 'invalid_request', 'public_metadata_json'],
    ['a nested metadata object', { price: '1', public_metadata_json: '{"k":{"a":1}}' }, 'invalid_request', 'public_metadata_json'],
    ['a metadata array value', { price: '1', private_metadata_json: '{"k":[1]}' }, 'invalid_request', 'private_metadata_json'],
    ['a metadata integer beyond 2^53', { price: '1', public_metadata_json: '{"k":9007199254740993}' }, 'invalid_request', 'public_metadata_json'],
    ['a success_url that is not a URL', { price: '1', success_url: 'thanks' }, 'invalid_request', 'success_url'],
    ['a javascript: cancel_url', { price: '1', cancel_url: 'javascript:alert(1)' }, 'invalid_request', 'cancel_url'],
    ['a success_url with credentials', { price: '1', success_url: 'https://user:pw@shop.example/thanks' }, 'invalid_request', 'success_url'],
    ['a success_url on another origin', { price: '1', success_url: 'https://evil.example/thanks' }, 'return_url_not_allowed', 'success_url'],
    ['a success_url on http instead of https', { price: '1', success_url: 'http://shop.example/thanks' }, 'return_url_not_allowed', 'success_url'],
    ['a success_url outside the allowed path', { price: '1', success_url: 'https://shop.example/account' }, 'return_url_not_allowed', 'success_url'],
    ['a success_url sharing only a string prefix', { price: '1', success_url: 'https://shop.example/thanks-evil' }, 'return_url_not_allowed', 'success_url'],
    ['a cancel_url on another port', { price: '1', cancel_url: 'https://shop.example:9443/cart' }, 'return_url_not_allowed', 'cancel_url'],
    ['any return URL with an empty allowlist', { price: '1', cancel_url: 'https://shop.example/thanks' }, 'return_url_not_allowed', 'cancel_url', { returnUrls: [] }],
  ];
  for (const [name, body, code, param, m] of refusals) {
    it(`refuses ${name} (${code}, param ${param})`, () => {
      const r = refusal(body, merchant(m));
      assert.deepEqual([r.code, r.param], [code, param], r.message);
      assert.ok(r.message.length > 5);
    });
  }

  it('empty strings are absent (signing drops them)', () => {
    const d = draft({ payment_rails: '', fiat_currency: '', fiat_amount: '', line_items_json: '', success_url: '' });
    assert.deepEqual([d.paymentRails, d.fiatCurrency, d.lineItems, d.successUrl], [['crypto'], undefined, [], undefined]);
  });

  it('rails are trimmed and keep their order', () => {
    assert.deepEqual(parsePaymentRails(' fiat , crypto'), ['fiat', 'crypto']);
    assert.deepEqual(parsePaymentRails(undefined), ['crypto']);
  });

  it("card is the card rail's other name: accepted, stored and answered as fiat on this surface", () => {
    assert.deepEqual(parsePaymentRails('crypto,card'), ['crypto', 'fiat']);
    assert.deepEqual(parsePaymentRails('card'), ['fiat']);
    const twice = parsePaymentRails('fiat,card') as { kind: string; param: string; message: string };
    assert.deepEqual([twice.kind, twice.param], ['refused', 'payment_rails']);
    assert.match(twice.message, /card rail twice/);
    const unknown = parsePaymentRails('crypto,bank') as { kind: string; message: string };
    assert.equal(unknown.kind, 'refused');
    assert.match(unknown.message, /crypto and fiat \(or its other name, card\)/);
  });
});

describe('line items', () => {
  it('amount is per unit: sum(amount × quantity) must equal the total exactly', () => {
    const items = parseLineItems('[{"name":"Tee","quantity":3,"amount":"0.1"},{"name":"Mug","quantity":1,"amount":"9.7"}]', { value: '10.00', param: 'price' });
    assert.deepEqual(items, [
      { name: 'Tee', quantity: 3, amount: '0.1' },
      { name: 'Mug', quantity: 1, amount: '9.7' },
    ]);
  });
  it('items without amounts, or a mix, are display-only (no sum check)', () => {
    assert.ok(Array.isArray(parseLineItems('[{"name":"a","quantity":1}]', { value: '5', param: 'price' })));
    assert.ok(Array.isArray(parseLineItems('[{"name":"a","quantity":1,"amount":"1"},{"name":"b","quantity":1}]', { value: '5', param: 'price' })));
  });
  it('a free item (amount "0") is allowed; 100 items are allowed', () => {
    assert.ok(Array.isArray(parseLineItems('[{"name":"gift","quantity":1,"amount":"0"},{"name":"a","quantity":1,"amount":"5"}]', { value: '5', param: 'price' })));
    assert.ok(Array.isArray(parseLineItems(JSON.stringify(Array.from({ length: 100 }, () => ({ name: 'a', quantity: 1 }))), undefined)));
  });
});

describe('metadata', () => {
  it('accepts strings, numbers, booleans and null; keeps __proto__ as data', () => {
    const raw = '{"a":"x","b":1.5,"c":true,"d":null,"__proto__":"p","e":9007199254740991}';
    const md = parseMetadata(raw, 'public_metadata_json');
    assert.equal(JSON.stringify(md), raw);
    assert.equal(Object.getPrototypeOf(md), Object.prototype);
  });
  it('50 keys of 40 characters and 500-character values are the limits', () => {
    const obj = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(40, 'k'), 'v'.repeat(500)]));
    assert.equal(Object.keys(parseMetadata(JSON.stringify(obj), 'private_metadata_json')).length, 50);
  });
});

describe('return URLs and the hosted URL', () => {
  it('origin + path prefix at a segment boundary', () => {
    const allow = ['https://shop.example/thanks', 'https://shop.example/a/'];
    assert.equal(isReturnUrlAllowed('https://shop.example/thanks', allow), true);
    assert.equal(isReturnUrlAllowed('https://SHOP.example:443/thanks/x', allow), true, 'host case and default port normalize');
    assert.equal(isReturnUrlAllowed('https://shop.example/a/b', allow), true);
    assert.equal(isReturnUrlAllowed('https://shop.example/a', allow), false);
    assert.equal(isReturnUrlAllowed('https://shop.example/thanks/../admin', allow), false, 'dot segments are resolved first');
    assert.equal(isReturnUrlAllowed('https://shop.example.evil.com/thanks', allow), false);
    assert.equal(isReturnUrlAllowed('https://shop.example/anything', ['https://shop.example']), true, 'an origin entry allows every path');
  });
  it('problems of a URL', () => {
    assert.equal(returnUrlProblem('https://shop.example/x'), undefined);
    assert.match(returnUrlProblem('ftp://shop.example/x')!, /http/);
    assert.match(returnUrlProblem('https://' + 'a'.repeat(2000))!, /longer/);
  });
  it('the checkout id travels in the fragment of the hosted URL', () => {
    assert.equal(hostedUrl('https://pay.example/', 'cs_abc'), 'https://pay.example/checkout/pay#cs_abc');
    assert.equal(new URL(hostedUrl('https://pay.example/base', 'cs_abc')).pathname, '/base/checkout/pay');
  });
});
