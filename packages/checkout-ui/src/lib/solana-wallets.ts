// Injected Solana wallets through the Wallet Standard, app side, without a wallet library: the page
// and the wallets meet through two window events, whichever loads first.
//   - a wallet that loads after the page dispatches `wallet-standard:register-wallet` whose detail
//     is a callback; the page calls it with its registration API;
//   - a page that loads after the wallets dispatches `wallet-standard:app-ready` whose detail is the
//     registration API; each wallet listening calls `register(wallet)` on it.
// Only what checkout needs is typed: a name, an icon, the chains, and the `standard:connect` and
// `solana:signAndSendTransaction` features.

const SIGN_AND_SEND = 'solana:signAndSendTransaction';
const CONNECT = 'standard:connect';

export interface StandardAccount {
  /** base58 public key */
  address: string;
  publicKey: Uint8Array;
  chains: readonly string[];
  features: readonly string[];
}

export interface SignAndSendInput {
  account: StandardAccount;
  /** the serialized transaction (wire format) */
  transaction: Uint8Array;
  /** a Wallet Standard chain, e.g. `solana:mainnet` or `solana:localnet` */
  chain: string;
  options?: { commitment?: 'processed' | 'confirmed' | 'finalized'; skipPreflight?: boolean };
}

export interface StandardWallet {
  version: string;
  name: string;
  icon: string;
  chains: readonly string[];
  features: Record<string, unknown>;
  accounts: readonly StandardAccount[];
}

/** A wallet this page can pay with: it connects and signs and sends transactions. */
export interface SolanaWallet {
  name: string;
  /** data:image URI, or '' when the wallet's icon is not one */
  icon: string;
  wallet: StandardWallet;
}

interface EventTargetLike {
  addEventListener(type: string, fn: (e: Event) => void): void;
  removeEventListener(type: string, fn: (e: Event) => void): void;
  dispatchEvent(e: Event): boolean;
}

type Feature<F> = { version?: string } & F;
type ConnectFeature = Feature<{ connect(input?: { silent?: boolean }): Promise<{ accounts: readonly StandardAccount[] }> }>;
type SignAndSendFeature = Feature<{ signAndSendTransaction(...inputs: SignAndSendInput[]): Promise<readonly { signature: Uint8Array }[]> }>;

function feature<F>(w: StandardWallet, name: string, method: string): F | undefined {
  const f = w.features?.[name] as Record<string, unknown> | undefined;
  return f && typeof f[method] === 'function' ? (f as F) : undefined;
}

/** True for a wallet object with what checkout needs (a name, chains, connect, sign-and-send). */
export function isPayingSolanaWallet(w: unknown): w is StandardWallet {
  if (typeof w !== 'object' || w === null) return false;
  const s = w as StandardWallet;
  return (
    typeof s.name === 'string' && Array.isArray(s.chains) && s.chains.some((c) => typeof c === 'string' && c.startsWith('solana:')) && !!feature<ConnectFeature>(s, CONNECT, 'connect') && !!feature<SignAndSendFeature>(s, SIGN_AND_SEND, 'signAndSendTransaction')
  );
}

/**
 * Starts Wallet Standard discovery on `target` (window): answers wallets that register later and
 * announces `app-ready` to those already loaded. `onChange` receives the list of wallets that can
 * pay on Solana each time one registers or unregisters. Returns a function that stops listening.
 */
export function discoverSolanaWallets(target: EventTargetLike, onChange: (wallets: SolanaWallet[]) => void): () => void {
  const registered = new Set<StandardWallet>();
  const emit = () => onChange([...registered].map((w) => ({ name: w.name.slice(0, 60), icon: typeof w.icon === 'string' && w.icon.startsWith('data:image/') ? w.icon : '', wallet: w })));
  const api = Object.freeze({
    register(...wallets: unknown[]): () => void {
      const added = wallets.filter((w): w is StandardWallet => isPayingSolanaWallet(w) && !registered.has(w));
      for (const w of added) registered.add(w);
      if (added.length) emit();
      return () => {
        let removed = false;
        for (const w of added) removed = registered.delete(w) || removed;
        if (removed) emit();
      };
    },
  });
  const onRegister = (e: Event) => {
    const callback = (e as CustomEvent).detail;
    // A wallet's callback throwing must not stop discovery of the others.
    if (typeof callback === 'function') {
      try {
        callback(api);
      } catch {
        /* a broken wallet is skipped */
      }
    }
  };
  target.addEventListener('wallet-standard:register-wallet', onRegister);
  target.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
  return () => target.removeEventListener('wallet-standard:register-wallet', onRegister);
}

/** Asks the wallet for its accounts; returns the first one that can sign and send on `chain`. */
export async function connectSolana(w: StandardWallet, chain: string): Promise<StandardAccount> {
  const c = feature<ConnectFeature>(w, CONNECT, 'connect');
  if (!c) throw { code: 4200, message: 'the wallet cannot connect' };
  const { accounts } = await c.connect();
  const a = (accounts ?? []).find((x) => x.chains?.includes(chain) && x.features?.includes(SIGN_AND_SEND));
  if (!a) throw { code: 4100, message: `the wallet has no account that can pay on ${chain}` };
  return a;
}

/** Has the wallet sign and send `transaction`; returns the signature (base58 by the caller). */
export async function signAndSend(w: StandardWallet, input: SignAndSendInput): Promise<Uint8Array> {
  const f = feature<SignAndSendFeature>(w, SIGN_AND_SEND, 'signAndSendTransaction');
  if (!f) throw { code: 4200, message: 'the wallet cannot send transactions' };
  const [out] = await f.signAndSendTransaction(input);
  if (!(out?.signature instanceof Uint8Array) || out.signature.length !== 64) throw { code: -32603, message: 'the wallet returned no transaction signature' };
  return out.signature;
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 (Bitcoin alphabet) of `bytes`: how a transaction signature is written. */
export function base58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (let i = 0; i < bytes.length && bytes[i] === 0; i++) out = '1' + out;
  return out;
}

/** The bytes of a standard base64 string (a transaction from the server). */
export function fromBase64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
