// Generates test-vectors/signing.json, the published merchant-signature vectors.
//
//   node --import tsx packages/protocol/scripts/gen-vectors.ts          # write the file
//   node --import tsx packages/protocol/scripts/gen-vectors.ts --check  # exit 1 if it is stale
//
// The inputs below are the source of truth; `canonical` and `sign` are computed. The test suite does
// not trust this script: it recomputes every vector with an independent implementation and checks
// several canonical strings against hand-written literals.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSignParams, canonicalString, signRequest, type SignInput } from '../src/signing.ts';

export type SigningVector = {
  name: string;
  description: string;
  api_secret: string;
  /** Decoded query parameters; `{}` when the request has none. */
  query: Record<string, string>;
  /** Top-level JSON body fields as transmitted; `{}` for a request without a body. */
  body: Record<string, unknown>;
  api_key: string;
  timestamp: string;
  nonce: string;
  canonical: string;
  sign: string;
};

type VectorInput = Omit<SigningVector, 'canonical' | 'sign' | 'api_secret' | 'api_key'> & Partial<Pick<SigningVector, 'api_secret' | 'api_key'>>;

// Fake credentials, published on purpose: never configure them anywhere.
const SECRET = 'sec_test_vectors_only_9XkPq2Lm';
const KEY = 'key_4NbVzQ7hTd2sWx9KcRfYpM';
const PAYER = '0x8ba1f109551bd432803012645ac136ddd64dba72';

const INPUTS: VectorInput[] = [
  {
    name: 'order_create_plain',
    description: 'POST /api/v1/orders with the required fields; chain_id is a JSON integer.',
    query: {},
    body: { dapp_order_id: 'shop-1001', chain_id: 2345, token_symbol: 'USDC', from_address: PAYER, amount_wei: '1000000' },
    timestamp: '1735689600',
    nonce: '0f8fad5b-d9cb-469f-a165-70867728950e',
  },
  {
    name: 'get_without_params',
    description: 'GET /api/v1/orders/{order_id}: no query, no body; only api_key, nonce and timestamp are signed (the path is not).',
    query: {},
    body: {},
    timestamp: '1735689601',
    nonce: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
  },
  {
    name: 'body_overrides_query',
    description: 'A body field overrides the same-named query parameter; other query parameters stay.',
    query: { merchant_id: 'mch_from_query', trace: 'q1' },
    body: { merchant_id: 'mch_from_body', dapp_order_id: 'shop-1002' },
    timestamp: '1735689602',
    nonce: '9a1b0f3c-8d2e-4f5a-b6c7-d8e9f0a1b2c3',
  },
  {
    name: 'headers_override_business_fields',
    description: 'Business fields named api_key, timestamp and nonce are overwritten by the exact header values.',
    query: { nonce: 'query-nonce' },
    body: { api_key: 'key_forged', timestamp: '1', nonce: 'body-nonce', dapp_order_id: 'shop-1003' },
    timestamp: '1735689603',
    nonce: 'b3c1d9e2-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
  },
  {
    name: 'empty_string_dropped',
    description: 'Empty-string values are removed, from the body and from the query.',
    query: { note: '' },
    body: { dapp_order_id: 'shop-1004', callback_calldata: '', merchant_id: '' },
    timestamp: '1735689604',
    nonce: 'c4d2e0f3-6a7b-4c8d-9e0f-1a2b3c4d5e6f',
  },
  {
    name: 'null_dropped',
    description: 'A null body value is omitted like an absent optional field (senders should not send null at all).',
    query: {},
    body: { dapp_order_id: 'shop-1005', token_contract: null, chain_id: 1 },
    timestamp: '1735689605',
    nonce: 'd5e3f1a4-7b8c-4d9e-8f1a-2b3c4d5e6f70',
  },
  {
    name: 'zero_and_false_kept',
    description: 'Zero (number and string) and false stay: only the empty string is dropped.',
    query: { page: '0' },
    body: { expires_in: 0, amount_wei: '0', test_mode: false },
    timestamp: '1735689606',
    nonce: 'e6f4a2b5-8c9d-4e0f-9a2b-3c4d5e6f7081',
  },
  {
    name: 'sign_field_dropped',
    description: 'A field named sign, in the query or the body, is never signed.',
    query: { sign: 'from-query' },
    body: { dapp_order_id: 'shop-1007', sign: 'deadbeef' },
    timestamp: '1735689607',
    nonce: 'f7a5b3c6-9d0e-4f1a-8b3c-4d5e6f708192',
  },
  {
    name: 'numbers_and_booleans',
    description: 'JSON integers are signed in decimal, booleans as true/false.',
    query: {},
    body: { chain_id: 42161, expires_in: 1800, block_number: 123456789012, paid: true, refundable: false },
    timestamp: '1735689608',
    nonce: 'a8b6c4d7-0e1f-4a2b-9c4d-5e6f708192a3',
  },
  {
    name: 'unicode_value',
    description: 'Non-ASCII values are signed as their UTF-8 bytes, unescaped (two-byte, three-byte and four-byte characters).',
    query: {},
    body: { dapp_order_id: 'café-東京-🚀', description: 'Grüße' },
    timestamp: '1735689609',
    nonce: 'b9c7d5e8-1f2a-4b3c-8d5e-6f708192a3b4',
  },
  {
    name: 'decoded_query_values',
    description: 'Query values are signed decoded: the URL carried q=a%20b%2Fc%C3%BC&r=x+y.',
    query: { q: 'a b/cü', r: 'x y' },
    body: {},
    timestamp: '1735689610',
    nonce: 'c0d8e6f9-2a3b-4c4d-9e6f-708192a3b4c5',
  },
  {
    name: 'ampersand_and_equals_unescaped',
    description: 'Values containing & and = are not escaped; the canonical string is ambiguous to split but signs fine.',
    query: {},
    body: { success_url: 'https://shop.example/ok?order=1&x=y', note: 'a=b&c=d' },
    timestamp: '1735689611',
    nonce: 'd1e9f7a0-3b4c-4d5e-8f70-8192a3b4c5d6',
  },
  {
    name: 'ascii_sort_order',
    description: 'Names sort by ASCII code: uppercase before "_" (0x5F) before lowercase; not locale order.',
    query: { b: '1', B: '2' },
    body: { a_b: '3', ab: '4', aB: '5', A: '6', a: '7', Z: '8', _z: '9' },
    timestamp: '1735689612',
    nonce: 'e2f0a8b1-4c5d-4e6f-9081-92a3b4c5d6e7',
  },
  {
    name: 'checkout_session_line_items_json',
    description: 'Checkout create: line_items_json and public_metadata_json are signed exactly as the transmitted strings (spacing included).',
    query: {},
    body: {
      checkout_type: 'DIRECT',
      payment_rails: 'crypto,fiat',
      price: '9.99',
      fiat_currency: 'USD',
      fiat_amount: '9.99',
      client_reference_id: 'cart_8812',
      expires_in: 1800,
      line_items_json: '[{"name":"T-shirt","quantity":1,"amount":"9.99"}]',
      public_metadata_json: '{"campaign": "spring", "ref": "a&b=c"}',
      success_url: 'https://shop.example/thanks',
    },
    timestamp: '1735689613',
    nonce: 'f3a1b9c2-5d6e-4f70-8192-a3b4c5d6e7f8',
  },
  {
    name: 'max_uint256_amount',
    description: 'A uint256 amount is a decimal string and signs verbatim (78 digits).',
    query: {},
    body: { amount_wei: ((1n << 256n) - 1n).toString(), dapp_order_id: 'shop-max', chain_id: 1, token_symbol: 'USDT', from_address: PAYER },
    timestamp: '1735689614',
    nonce: 'a4b2c0d3-6e7f-4081-92a3-b4c5d6e7f809',
  },
  {
    name: 'other_secret_and_key',
    description: 'A different secret with non-ASCII bytes keys the HMAC as UTF-8; the same request signs differently.',
    api_secret: 'sec_Zürich_🔑_rotated',
    api_key: 'key_9TqLw3Hs8Vb2Nc6XzPd4Rf',
    query: {},
    body: { dapp_order_id: 'shop-1001', chain_id: 2345, token_symbol: 'USDC', from_address: PAYER, amount_wei: '1000000' },
    timestamp: '1735689600',
    nonce: '0f8fad5b-d9cb-469f-a165-70867728950e',
  },
];

/** Computes every vector from {@link INPUTS}. */
export function buildVectors(): SigningVector[] {
  return INPUTS.map((v) => {
    const api_secret = v.api_secret ?? SECRET;
    const api_key = v.api_key ?? KEY;
    const input: SignInput = { query: v.query, body: v.body, apiKey: api_key, timestamp: v.timestamp, nonce: v.nonce };
    return {
      name: v.name,
      description: v.description,
      api_secret,
      query: v.query,
      body: v.body,
      api_key,
      timestamp: v.timestamp,
      nonce: v.nonce,
      canonical: canonicalString(buildSignParams(input)),
      sign: signRequest(api_secret, input),
    };
  });
}

export const VECTORS_PATH = fileURLToPath(new URL('../test-vectors/signing.json', import.meta.url));

/** The exact file contents: stable 2-space JSON with a trailing newline. */
export function renderVectors(): string {
  return `${JSON.stringify({ version: 1, algorithm: 'tollgate-merchant-hmac-sha256', vectors: buildVectors() }, null, 2)}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const next = renderVectors();
  if (process.argv.includes('--check')) {
    const current = readFileSync(VECTORS_PATH, 'utf8');
    if (current !== next) {
      console.error(`${VECTORS_PATH} is stale; run scripts/gen-vectors.ts`);
      process.exit(1);
    }
    console.log('signing vectors up to date');
  } else {
    writeFileSync(VECTORS_PATH, next);
    console.log(`wrote ${buildVectors().length} vectors to ${VECTORS_PATH}`);
  }
}
