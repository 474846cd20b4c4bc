import { getAddress, getTypesForEIP712Domain, type Hex, type LocalAccount, parseTransaction, recoverMessageAddress, recoverTransactionAddress, recoverTypedDataAddress, serializeTypedData, toHex, type TransactionSerializable } from 'viem';
import { toAccount } from 'viem/accounts';
import { RedactedSigner } from '../port.ts';

/** A remote signer that could not sign, with a message naming its origin only (never its URL's credentials). */
export class RemoteSignerError extends Error {}

export interface RemoteSignerOptions {
  /** JSON-RPC endpoint, e.g. Web3Signer's `http://host:9000` or Clef's `http://127.0.0.1:8550`; user:password@ becomes Basic auth */
  url: string;
  /** the account the signer holds for Tollgate (checksummed or not) */
  address: `0x${string}`;
  /** per request; default 10 s */
  timeoutMs?: number;
}

const q = (v: bigint | number | undefined) => (v === undefined ? undefined : toHex(v));

/**
 * The executor key held by a remote signer over JSON-RPC (`eth_signTransaction`,
 * `eth_signTypedData_v4`, `eth_sign`), the methods Web3Signer, Clef and an Ethereum node with an
 * unlocked account answer. Tollgate still chooses every field (nonce included: the executor
 * records the signed bytes before it sends them) and only asks for a signature; each answer is
 * parsed and checked — signed by the configured address, the very fields asked for — so a signer
 * that signs something else is refused rather than broadcast.
 */
export class RemoteSigner extends RedactedSigner {
  readonly mode = 'remote' as const;
  readonly executorAddress: `0x${string}`;
  readonly #endpoint: string;
  readonly #auth: string | undefined;
  /** scheme://host[:port] only: what errors and JSON show */
  readonly #origin: string;
  readonly #timeoutMs: number;
  readonly #account: LocalAccount;
  #id = 0;

  constructor(opts: RemoteSignerOptions) {
    super();
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      throw new RemoteSignerError('the remote signer URL is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RemoteSignerError('the remote signer URL must be http(s)');
    // fetch refuses URLs with credentials: they travel as a Basic Authorization header instead.
    this.#auth = url.username || url.password ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
    url.username = '';
    url.password = '';
    this.#endpoint = url.href;
    this.#origin = url.origin;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.executorAddress = getAddress(opts.address);
    const address = this.executorAddress;
    this.#account = toAccount({
      address,
      signTransaction: (tx) => this.#signTransaction(tx as TransactionSerializable),
      signTypedData: async (typedData) => {
        // As viem's own JSON-RPC accounts send it: the EIP712Domain type spelled out (the signer hashes
        // the domain with the types it is given; without it the domain would be empty).
        const t = typedData as { domain?: Record<string, unknown>; types: Record<string, unknown> };
        const types = { EIP712Domain: getTypesForEIP712Domain({ domain: t.domain as never }), ...t.types };
        const signature = await this.#call<Hex>('eth_signTypedData_v4', [address, serializeTypedData({ ...(typedData as object), types } as never)]);
        this.#expectHex(signature, 'eth_signTypedData_v4', 65);
        if (!this.#same(await recoverTypedDataAddress({ ...(typedData as Record<string, unknown>), signature } as never))) throw new RemoteSignerError(`the remote signer at ${this.#origin} signed typed data with another key`);
        return signature;
      },
      signMessage: async ({ message }) => {
        const data = typeof message === 'string' ? toHex(message) : typeof message.raw === 'string' ? message.raw : toHex(message.raw);
        const signature = await this.#call<Hex>('eth_sign', [address, data]);
        this.#expectHex(signature, 'eth_sign', 65);
        if (!this.#same(await recoverMessageAddress({ message, signature }))) throw new RemoteSignerError(`the remote signer at ${this.#origin} signed a message with another key`);
        return signature;
      },
    });
  }

  account(): LocalAccount {
    return this.#account;
  }

  protected override describe(): Record<string, string> {
    return { signer: this.#origin };
  }

  /** At start: the signer answers and lists the configured address among its accounts. */
  override async check(): Promise<void> {
    const accounts = await this.#call<unknown>('eth_accounts', []);
    if (!Array.isArray(accounts) || !accounts.some((a) => typeof a === 'string' && this.#same(a))) {
      throw new RemoteSignerError(`the remote signer at ${this.#origin} does not hold ${this.executorAddress}`);
    }
  }

  async #signTransaction(tx: TransactionSerializable): Promise<Hex> {
    if (tx.type !== 'eip1559') throw new RemoteSignerError('the remote signer signs EIP-1559 transactions only');
    const request = {
      from: this.executorAddress,
      to: tx.to ?? undefined,
      data: tx.data ?? '0x',
      value: q(tx.value ?? 0n),
      gas: q(tx.gas),
      nonce: q(tx.nonce),
      chainId: q(tx.chainId),
      type: '0x2',
      maxFeePerGas: q(tx.maxFeePerGas),
      maxPriorityFeePerGas: q(tx.maxPriorityFeePerGas),
    };
    const answer = await this.#call<unknown>('eth_signTransaction', [request]);
    // Web3Signer and anvil answer the raw transaction; geth and Clef `{ raw, tx }`.
    const raw = typeof answer === 'object' && answer !== null && 'raw' in answer ? (answer as { raw: unknown }).raw : answer;
    this.#expectHex(raw, 'eth_signTransaction');
    let parsed: ReturnType<typeof parseTransaction>;
    try {
      parsed = parseTransaction(raw as Hex);
    } catch {
      throw new RemoteSignerError(`the remote signer at ${this.#origin} answered eth_signTransaction with bytes that are not a transaction`);
    }
    const differs = [
      ['type', parsed.type, 'eip1559'],
      ['chainId', parsed.chainId, tx.chainId],
      ['nonce', parsed.nonce ?? 0, tx.nonce],
      ['to', parsed.to?.toLowerCase(), tx.to?.toLowerCase()],
      ['data', (parsed.data ?? '0x').toLowerCase(), (tx.data ?? '0x').toLowerCase()],
      ['value', parsed.value ?? 0n, tx.value ?? 0n],
      ['gas', parsed.gas, tx.gas],
      ['maxFeePerGas', parsed.maxFeePerGas, tx.maxFeePerGas],
      ['maxPriorityFeePerGas', parsed.maxPriorityFeePerGas, tx.maxPriorityFeePerGas],
    ].find(([, got, want]) => got !== want);
    if (differs) throw new RemoteSignerError(`the remote signer at ${this.#origin} signed a transaction whose ${differs[0]} differs from the request`);
    if (!this.#same(await recoverTransactionAddress({ serializedTransaction: raw as never }))) {
      throw new RemoteSignerError(`the remote signer at ${this.#origin} signed the transaction with another key`);
    }
    return raw as Hex;
  }

  #same(a: string): boolean {
    return a.toLowerCase() === this.executorAddress.toLowerCase();
  }

  #expectHex(v: unknown, method: string, bytes?: number): asserts v is Hex {
    const ok = typeof v === 'string' && /^0x([0-9a-fA-F]{2})+$/.test(v) && (bytes === undefined || v.length === 2 + bytes * 2);
    if (!ok) throw new RemoteSignerError(`the remote signer at ${this.#origin} answered ${method} with a malformed result`);
  }

  /** One JSON-RPC call; errors name the origin, the method and the signer's own error (bounded), nothing of the URL's credentials. */
  async #call<T>(method: string, params: unknown[]): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.#endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.#auth ? { authorization: this.#auth } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#id, method, params }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${this.#timeoutMs} ms` : 'unreachable';
      throw new RemoteSignerError(`the remote signer at ${this.#origin} is ${why} (${method})`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new RemoteSignerError(`the remote signer at ${this.#origin} answered ${method} with HTTP ${res.status} and no JSON`);
    }
    const b = body as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (b.error) {
      const msg = typeof b.error.message === 'string' ? b.error.message.slice(0, 200) : 'no message';
      throw new RemoteSignerError(`the remote signer at ${this.#origin} refused ${method}: ${String(b.error.code)} ${msg}`);
    }
    if (!res.ok || !('result' in b)) throw new RemoteSignerError(`the remote signer at ${this.#origin} answered ${method} with HTTP ${res.status}`);
    return b.result as T;
  }
}
