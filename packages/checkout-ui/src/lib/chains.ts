// Network names and explorer links. Both come from the server's configuration through the public
// session view (`payment_options[].chain_name`, `explorer_url`); the page keeps no list of its own,
// so an operator's name or explorer is what the payer sees, and an unknown chain is never guessed.

/** @example networkName({ chain_id: 84532, chain_name: 'Base Sepolia' }) // => 'Base Sepolia' */
export function networkName(o: { chain_id: number; chain_name?: string | undefined }): string {
  return o.chain_name || `Chain ${o.chain_id}`;
}

/**
 * The explorer page of a transaction, or undefined when the chain names no explorer, the explorer
 * is not an http(s) URL, or the hash is not a transaction hash (nothing else is put in the href).
 *
 * @example explorerTxUrl('https://sepolia.basescan.org/', '0xab…') // => 'https://sepolia.basescan.org/tx/0xab…'
 */
export function explorerTxUrl(explorer: string | undefined, txHash: string | undefined): string | undefined {
  if (!explorer || !txHash || !/^0x[0-9a-fA-F]{64}$/.test(txHash)) return undefined;
  try {
    const u = new URL(explorer);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}/tx/${txHash}`;
  } catch {
    return undefined;
  }
}
