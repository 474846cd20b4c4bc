import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explorerTxUrl, networkName } from '../../src/lib/chains.ts';

const HASH = '0x' + 'ab'.repeat(32);

test('networkName: the configured name, else "Chain <id>" (never guessed)', () => {
  assert.equal(networkName({ chain_id: 84532, chain_name: 'Base Sepolia' }), 'Base Sepolia');
  assert.equal(networkName({ chain_id: 84532 }), 'Chain 84532');
  assert.equal(networkName({ chain_id: 7, chain_name: '' }), 'Chain 7');
});

test('explorerTxUrl: <explorer>/tx/<hash>; nothing for a missing explorer, a bad scheme or a bad hash', () => {
  assert.equal(explorerTxUrl('https://sepolia.basescan.org', HASH), `https://sepolia.basescan.org/tx/${HASH}`);
  assert.equal(explorerTxUrl('https://sepolia.basescan.org/', HASH), `https://sepolia.basescan.org/tx/${HASH}`);
  assert.equal(explorerTxUrl('https://explorer.example/chain/5//', HASH), `https://explorer.example/chain/5/tx/${HASH}`);
  assert.equal(explorerTxUrl(undefined, HASH), undefined);
  assert.equal(explorerTxUrl('https://etherscan.io', undefined), undefined);
  assert.equal(explorerTxUrl('javascript:alert(1)//', HASH), undefined);
  assert.equal(explorerTxUrl('not a url', HASH), undefined);
  assert.equal(explorerTxUrl('https://etherscan.io', '0x1234'), undefined);
  assert.equal(explorerTxUrl('https://etherscan.io', `${HASH}"><b`), undefined);
});
