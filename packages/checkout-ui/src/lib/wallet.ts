// Injected wallets: discovered through EIP-6963 (`eip6963:requestProvider` / `announceProvider`),
// with `window.ethereum` as the fallback when no wallet announces itself. Everything goes through
// the EIP-1193 `request` method; no wallet library is bundled.
import { encodeErc20Transfer, toHexChainId } from './calldata.ts';
import { isAddress } from './address.ts';

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>;
}

interface WalletInfo {
  uuid: string;
  name: string;
  /** data: URI (EIP-6963); empty for the window.ethereum fallback */
  icon: string;
  rdns: string;
}

export interface Wallet {
  info: WalletInfo;
  provider: Eip1193Provider;
}

interface EventTargetLike {
  addEventListener(type: string, fn: (e: Event) => void): void;
  removeEventListener(type: string, fn: (e: Event) => void): void;
  dispatchEvent(e: Event): boolean;
}

function isProvider(p: unknown): p is Eip1193Provider {
  return typeof p === 'object' && p !== null && typeof (p as Eip1193Provider).request === 'function';
}

/**
 * Starts EIP-6963 discovery on `target` (window). `onChange` receives the current list whenever a
 * wallet announces itself, and once after `fallbackMs` with window.ethereum added if nobody did.
 * Returns a function that stops listening.
 */
export function discoverWallets(target: EventTargetLike & { ethereum?: unknown }, onChange: (wallets: Wallet[]) => void, fallbackMs = 400): () => void {
  const wallets: Wallet[] = [];
  const onAnnounce = (e: Event) => {
    const d = (e as CustomEvent).detail as { info?: Partial<WalletInfo>; provider?: unknown } | undefined;
    const info = d?.info;
    if (!info || typeof info.uuid !== 'string' || typeof info.name !== 'string' || !isProvider(d.provider)) return;
    if (wallets.some((w) => w.info.uuid === info.uuid)) return;
    wallets.push({
      info: { uuid: info.uuid, name: info.name.slice(0, 60), icon: typeof info.icon === 'string' && info.icon.startsWith('data:image/') ? info.icon : '', rdns: String(info.rdns ?? '') },
      provider: d.provider,
    });
    onChange([...wallets]);
  };
  target.addEventListener('eip6963:announceProvider', onAnnounce);
  target.dispatchEvent(new Event('eip6963:requestProvider'));
  const timer = setTimeout(() => {
    if (wallets.length === 0 && isProvider(target.ethereum)) wallets.push({ info: { uuid: 'window.ethereum', name: 'Browser wallet', icon: '', rdns: '' }, provider: target.ethereum });
    onChange([...wallets]);
  }, fallbackMs);
  return () => {
    clearTimeout(timer);
    target.removeEventListener('eip6963:announceProvider', onAnnounce);
  };
}

/** An EIP-1193 error (`{ code, message }`), or anything a provider threw. */
export function walletErrorMessage(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (code === 4001) return 'You declined the request in your wallet.';
  if (code === 4100) return 'The wallet has not authorized this page. Unlock it and try again.';
  if (code === 4902) return 'Your wallet does not know this network. Add it in the wallet, then try again.';
  if (code === -32002) return 'Your wallet already has a request waiting. Open the wallet to answer it.';
  const msg = (err as { message?: unknown })?.message;
  return typeof msg === 'string' && msg ? `Wallet error: ${msg.slice(0, 200)}` : 'The wallet reported an error.';
}

/** Asks for the accounts; returns the first as lowercase hex. */
export async function connect(provider: Eip1193Provider): Promise<string> {
  const accounts = await provider.request({ method: 'eth_requestAccounts' });
  const first = Array.isArray(accounts) ? accounts[0] : undefined;
  if (!isAddress(first)) throw { code: 4100, message: 'no account returned' };
  return first.toLowerCase();
}

/** Switches the wallet to `chainId` unless it is already there; verifies the switch. */
export async function ensureChain(provider: Eip1193Provider, chainId: number): Promise<void> {
  const current = async () => Number.parseInt(String(await provider.request({ method: 'eth_chainId' })), 16);
  if ((await current()) === chainId) return;
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: toHexChainId(chainId) }] });
  if ((await current()) !== chainId) throw { code: 4901, message: `the wallet did not switch to chain ${chainId}` };
}

/** Sends the ERC-20 transfer from `from`; returns the transaction hash. */
export async function sendTransfer(provider: Eip1193Provider, t: { from: string; tokenContract: string; payTo: string; amountWei: string }): Promise<string> {
  const hash = await provider.request({
    method: 'eth_sendTransaction',
    params: [{ from: t.from, to: t.tokenContract, value: '0x0', data: encodeErc20Transfer(t.payTo, t.amountWei) }],
  });
  if (typeof hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(hash)) throw { code: -32603, message: 'the wallet returned no transaction hash' };
  return hash.toLowerCase();
}
