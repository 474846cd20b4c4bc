import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { getBase58Decoder, getBase58Encoder } from '@solana/codecs-strings';
import { ConfigError } from './errors.ts';
import type { SolanaChainConfig, SolanaChainFile } from './schema.ts';
import { SolanaDelegateKey } from './secrets.ts';

/** Token program ids (the only two an SPL stablecoin mint can belong to). */
const SOLANA_TOKEN_PROGRAMS = {
  'spl-token': 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'token-2022': 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
} as const;

/**
 * Well-known Solana clusters by genesis hash: a display name and explorer (the explorer serves a
 * transaction at `<url>/tx/<signature>`). Mints are never guessed, as for EVM tokens.
 */
const KNOWN_SOLANA_CLUSTERS: Readonly<Record<string, { name: string; explorer_url: string }>> = {
  '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d': { name: 'Solana', explorer_url: 'https://explorer.solana.com' },
};

/** CAIP-2 id of a Solana cluster: the namespace `solana` and the first 32 characters of its genesis hash. */
function solanaNetwork(genesisHash: string): string {
  return `solana:${genesisHash.slice(0, 32)}`;
}

export function solanaChainFromFile(c: SolanaChainFile, i: number): SolanaChainConfig {
  const known = KNOWN_SOLANA_CLUSTERS[c.genesis_hash];
  const symbols = new Set<string>();
  c.tokens.forEach((t, j) => {
    if (symbols.has(t.symbol)) throw new ConfigError(`chains.${i}.tokens.${j}.symbol`, `duplicate symbol ${t.symbol}`);
    symbols.add(t.symbol);
  });
  const explorerUrl = (c.explorer_url ?? known?.explorer_url)?.replace(/\/+$/, '');
  return {
    kind: 'solana',
    chainId: c.chain_id,
    name: c.name ?? known?.name ?? `Solana ${c.genesis_hash.slice(0, 8)}`,
    ...(explorerUrl ? { explorerUrl } : {}),
    rpcUrl: c.rpc_url,
    genesisHash: c.genesis_hash,
    network: solanaNetwork(c.genesis_hash),
    confirmCommitment: c.confirm_commitment ?? 'confirmed',
    finalityCommitment: 'finalized',
    pollIntervalMs: c.poll_interval_ms ?? 1000,
    tokens: c.tokens.map((t) => ({ symbol: t.symbol, mint: t.mint, decimals: t.decimals, programId: SOLANA_TOKEN_PROGRAMS[t.program] })),
  };
}

/** The delegate key of a 32-byte ed25519 private key (its public key derived with node:crypto). */
export function solanaDelegateKeyFromSeed(seed: Uint8Array): SolanaDelegateKey {
  if (seed.length !== 32) throw new Error('an ed25519 private key is 32 bytes');
  // PKCS#8 wrapping of a raw ed25519 private key (RFC 8410), the form node:crypto imports.
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'der', type: 'spki' });
  return new SolanaDelegateKey(seed, getBase58Decoder().decode(spki.subarray(spki.length - 32)));
}

/**
 * SOLANA_DELEGATE_KEY: base58 of a 64-byte keypair (private ‖ public, as solana-keygen and
 * wallets export it; the public half must match) or of the 32-byte private key.
 */
export function solanaDelegateKey(raw: string | undefined): SolanaDelegateKey | undefined {
  if (!raw) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(getBase58Encoder().encode(raw));
  } catch {
    throw new ConfigError('SOLANA_DELEGATE_KEY', 'not base58');
  }
  if (bytes.length !== 32 && bytes.length !== 64) throw new ConfigError('SOLANA_DELEGATE_KEY', 'must be a 64-byte keypair or a 32-byte private key');
  const key = solanaDelegateKeyFromSeed(bytes.subarray(0, 32));
  if (bytes.length === 64 && getBase58Decoder().decode(bytes.subarray(32)) !== key.address) {
    throw new ConfigError('SOLANA_DELEGATE_KEY', 'the public half of the keypair does not match its private key');
  }
  return key;
}

/**
 * SOLANA_DELEGATE_KEYPAIR: a Solana CLI keypair file (`solana-keygen new -o FILE`), a JSON array
 * of the 64 keypair bytes (private seed ‖ public key); the public half must match. Errors name the
 * file and the cause, never a byte of it.
 */
export function solanaDelegateKeypairFile(path: string): SolanaDelegateKey {
  let bytes: unknown;
  try {
    bytes = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError('SOLANA_DELEGATE_KEYPAIR', code ? `cannot read ${path} (${code})` : `${path} is not JSON`);
  }
  if (!Array.isArray(bytes) || bytes.length !== 64 || !bytes.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    throw new ConfigError('SOLANA_DELEGATE_KEYPAIR', `${path} must be a JSON array of 64 bytes (a Solana CLI keypair file)`);
  }
  const all = Uint8Array.from(bytes as number[]);
  const key = solanaDelegateKeyFromSeed(all.subarray(0, 32));
  const matches = getBase58Decoder().decode(all.subarray(32)) === key.address;
  all.fill(0);
  if (!matches) throw new ConfigError('SOLANA_DELEGATE_KEYPAIR', `the public half of ${path} does not match its private key`);
  return key;
}
