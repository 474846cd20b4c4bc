/**
 * The local SVM: a JSON-RPC server on loopback over one LiteSVM ledger, with test tokens created at
 * start — USDC on the classic SPL Token program, USDT on Token-2022 (optionally with a transfer
 * fee) — and payers funded with SOL and both tokens. Keys and mints are derived from fixed seeds,
 * so every start has the same addresses (a dev config can name them).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressEncoder,
  getBase58Decoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type KeyPairSigner,
} from '@solana/kit';
import { getCreateAssociatedTokenIdempotentInstruction, getMintToCheckedInstruction } from '@solana-program/token';
import { encodeMint, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, type TransferFee } from './codec.ts';
import { Ledger, type LedgerOptions } from './ledger.ts';
import { associatedTokenAddress } from './payer.ts';
import { handle, RpcError } from './rpc.ts';

/** Genesis hash the local SVM reports: fixed, so its CAIP-2 id `solana:<first 32 chars>` is stable. */
export const LOCAL_GENESIS_HASH = getBase58Decoder().decode(createHash('sha256').update('tollgate-local-svm').digest());
export const LOCAL_CAIP2 = `solana:${LOCAL_GENESIS_HASH.slice(0, 32)}`;

export interface LocalToken {
  symbol: 'USDC' | 'USDT';
  mint: Address;
  decimals: number;
  program: Address;
  fee?: TransferFee;
}

export interface LocalSvmOptions extends LedgerOptions {
  /** 0 = any free port */
  port?: number;
  payers?: number;
  /** token units (smallest unit) minted to each payer, per token */
  fundAmount?: bigint;
  /** Token-2022 transfer fee of USDT (none by default) */
  usdtTransferFee?: TransferFee;
}

export interface LocalSvm {
  rpcUrl: string;
  genesisHash: string;
  caip2: string;
  ledger: Ledger;
  tokens: LocalToken[];
  payers: KeyPairSigner[];
  /**
   * The payers' keypairs as the Solana CLI writes them (`solana-keygen new -o FILE`: a JSON array
   * of 64 bytes, private seed ‖ public key), for tools outside this process (the dev profile's
   * dev.json). Derived from public seeds, like anvil's keys: never a real key.
   */
  payerKeypairs: number[][];
  /** mint authority of both test tokens (also the faucet's fee payer) */
  authority: KeyPairSigner;
  /** mints tokens to a wallet's associated token account (created when missing) */
  fund(owner: Address, symbol: 'USDC' | 'USDT', amount: bigint): Promise<void>;
  stop(): Promise<void>;
}

const seedOf = (label: string): Buffer => createHash('sha256').update(`tollgate-svm:${label}`).digest();

async function signerFromSeed(label: string): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(seedOf(label));
}

export async function startLocalSvm(opts: LocalSvmOptions = {}): Promise<LocalSvm> {
  const ledger = new Ledger(opts);
  const authority = await signerFromSeed('authority');
  ledger.airdrop(authority.address, 1_000_000_000_000n);
  const usdcMint = await signerFromSeed('mint:USDC');
  const usdtMint = await signerFromSeed('mint:USDT');
  const tokens: LocalToken[] = [
    { symbol: 'USDC', mint: usdcMint.address, decimals: 6, program: TOKEN_PROGRAM },
    { symbol: 'USDT', mint: usdtMint.address, decimals: 6, program: TOKEN_2022_PROGRAM, ...(opts.usdtTransferFee ? { fee: opts.usdtTransferFee } : {}) },
  ];
  for (const t of tokens) {
    const data = encodeMint({ mintAuthority: authority.address, decimals: t.decimals, ...(t.fee ? { fee: t.fee } : {}) });
    ledger.svm.setAccount({
      address: t.mint,
      data,
      executable: false,
      lamports: ledger.svm.minimumBalanceForRentExemption(BigInt(data.length)),
      programAddress: t.program,
      space: BigInt(data.length),
    } as unknown as Parameters<typeof ledger.svm.setAccount>[0]);
  }

  const txEncoder = getTransactionEncoder();
  async function fund(owner: Address, symbol: 'USDC' | 'USDT', amount: bigint): Promise<void> {
    const t = tokens.find((x) => x.symbol === symbol)!;
    const ata = await associatedTokenAddress(owner, t.mint, t.program);
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(authority, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: ledger.svm.latestBlockhash() as Blockhash, lastValidBlockHeight: ledger.slot + 150n }, m),
      (m) =>
        appendTransactionMessageInstructions(
          [
            getCreateAssociatedTokenIdempotentInstruction({ payer: authority, ata, owner, mint: t.mint, tokenProgram: t.program }),
            getMintToCheckedInstruction({ mint: t.mint, token: ata, mintAuthority: authority, amount, decimals: t.decimals }, { programAddress: t.program }),
          ],
          m,
        ),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const record = ledger.execute(signed, Uint8Array.from(txEncoder.encode(signed)));
    if (!record || record.err !== null) throw new Error(`funding ${symbol} failed: ${JSON.stringify(record?.err ?? 'not executed')}`);
  }

  const payers: KeyPairSigner[] = [];
  const payerKeypairs: number[][] = [];
  for (let i = 0; i < (opts.payers ?? 3); i++) {
    const p = await signerFromSeed(`payer:${i}`);
    payerKeypairs.push([...seedOf(`payer:${i}`), ...getAddressEncoder().encode(p.address)]);
    ledger.airdrop(p.address, 100_000_000_000n);
    for (const t of tokens) await fund(p.address, t.symbol, opts.fundAmount ?? 1_000_000_000_000n);
    payers.push(p);
  }

  const ctx = { ledger, genesisHash: LOCAL_GENESIS_HASH };
  const server = createServer((req, res) => {
    void answer(ctx, req).then(
      (body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      },
      () => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      },
    );
  });
  try {
    await listen(server, opts.port ?? 0);
  } catch (err) {
    // A taken port must not leave the ledger's slot timer running in a caller that retries on
    // another port (the dev profile falls back from 8899 to any port).
    ledger.stop();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    genesisHash: LOCAL_GENESIS_HASH,
    caip2: LOCAL_CAIP2,
    ledger,
    tokens,
    payers,
    payerKeypairs,
    authority,
    fund,
    async stop() {
      ledger.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

type Req = { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown };

function one(ctx: Parameters<typeof handle>[0], r: Req) {
  const id = r.id ?? null;
  try {
    if (typeof r.method !== 'string') throw new RpcError(-32600, 'Invalid request');
    const params = Array.isArray(r.params) ? r.params : [];
    return { jsonrpc: '2.0', id, result: handle(ctx, r.method, params) };
  } catch (err) {
    if (err instanceof RpcError) return { jsonrpc: '2.0', id, error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) } };
    return { jsonrpc: '2.0', id, error: { code: -32603, message: `Internal error: ${(err as Error).message}` } };
  }
}

async function answer(ctx: Parameters<typeof handle>[0], req: IncomingMessage): Promise<string> {
  const parsed = JSON.parse(await readBody(req)) as Req | Req[];
  return stringify(Array.isArray(parsed) ? parsed.map((r) => one(ctx, r)) : one(ctx, parsed));
}

/** JSON with bigints as bare integers (u64 values such as lamports exceed 2^53; the client parses them as bigint). */
function stringify(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `__big__${x}__` : x)).replace(/"__big__(-?\d+)__"/g, '$1');
}
