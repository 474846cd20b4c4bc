// The chain families' planners (orders/ports.ts PaymentPlanner) as accepting a recorded payment
// uses them (orders/accept.ts): the transaction a merchant names is compared in its stored form.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evmPaymentPlanner } from '../../src/chain/evm/planner.ts';
import { solanaPaymentPlanner } from '../../src/chain/solana/planner.ts';

const HASH = `0x${'AbCdEf0123456789'.repeat(4)}`;
const SIGNATURE = '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';

describe('transaction references by chain family', () => {
  it('EVM: a 0x hash is stored lowercase, so it is compared lowercase whatever case it is named in', () => {
    assert.equal(evmPaymentPlanner(undefined).transactionRef(HASH), HASH.toLowerCase());
  });
  it('EVM (also the default planner of a chain no family has): anything else stays as given', () => {
    assert.equal(evmPaymentPlanner(undefined).transactionRef(SIGNATURE), SIGNATURE);
  });
  it('Solana: a signature is case-sensitive base58, compared as given', () => {
    assert.equal(solanaPaymentPlanner({}).transactionRef(SIGNATURE), SIGNATURE);
  });
});
