/**
 * JSON shapes of the Solana RPC's answers built from the ledger's records (pure): transactions in
 * `json`, `jsonParsed` and `base64` encodings, token balances, accounts.
 */
import { getBase58Decoder, getBase64Decoder, type Address } from '@solana/kit';
import { readMintDecimals, readTokenAccount, isTokenProgram, uiTokenAmount } from './codec.ts';
import type { TokenBalance, TxRecord } from './ledger.ts';

const b58 = getBase58Decoder();
const b64 = getBase64Decoder();

export type Encoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

function tokenBalanceJson(t: TokenBalance) {
  return {
    accountIndex: t.accountIndex,
    mint: t.mint,
    owner: t.owner,
    programId: t.programId,
    uiTokenAmount: uiTokenAmount(t.amount, t.decimals),
  };
}

function isWritable(r: TxRecord, i: number): boolean {
  const h = r.header;
  if (i < h.numSignerAccounts) return i < h.numSignerAccounts - h.numReadonlySignerAccounts;
  return i < r.accountKeys.length - h.numReadonlyNonSignerAccounts;
}

/**
 * A top-level instruction in jsonParsed form: SPL Token transfers are parsed (as a node's parser
 * does), every other instruction stays "partially decoded" (programId, accounts, base58 data),
 * which is also what a real node returns for programs it has no parser for.
 */
function parsedInstruction(r: TxRecord, ix: TxRecord['instructions'][number], decimalsOf: (mint: Address) => number | undefined) {
  const programId = r.accountKeys[ix.programIdIndex]!;
  const accounts = ix.accounts.map((i) => r.accountKeys[i]!);
  const d = ix.data;
  if (isTokenProgram(programId) && d.length >= 9 && (d[0] === 3 || d[0] === 12)) {
    const amount = new DataView(d.buffer, d.byteOffset, d.byteLength).getBigUint64(1, true);
    if (d[0] === 3 && accounts.length >= 3) {
      return {
        program: programId === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' ? 'spl-token' : 'spl-token-2022',
        programId,
        parsed: { type: 'transfer', info: { source: accounts[0], destination: accounts[1], authority: accounts[2], amount: amount.toString() } },
        stackHeight: null,
      };
    }
    if (d[0] === 12 && d.length >= 10 && accounts.length >= 4) {
      const decimals = d[9]!;
      return {
        program: programId === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' ? 'spl-token' : 'spl-token-2022',
        programId,
        parsed: {
          type: 'transferChecked',
          info: {
            source: accounts[0],
            mint: accounts[1],
            destination: accounts[2],
            authority: accounts[3],
            tokenAmount: uiTokenAmount(amount, decimalsOf(accounts[1] as Address) ?? decimals),
          },
        },
        stackHeight: null,
      };
    }
  }
  return { programId, accounts, data: b58.decode(d), stackHeight: null };
}

export function transactionJson(r: TxRecord, encoding: Encoding, version: 'legacy' | number, decimalsOf: (mint: Address) => number | undefined) {
  const meta = {
    err: r.err,
    status: r.err === null ? { Ok: null } : { Err: r.err },
    fee: r.fee,
    preBalances: r.preBalances,
    postBalances: r.postBalances,
    preTokenBalances: r.preTokenBalances.map(tokenBalanceJson),
    postTokenBalances: r.postTokenBalances.map(tokenBalanceJson),
    innerInstructions: [],
    logMessages: r.logs,
    rewards: [],
    loadedAddresses: { writable: [], readonly: [] },
    computeUnitsConsumed: r.computeUnits,
  };
  let transaction: unknown;
  if (encoding === 'base64') transaction = [b64.decode(r.wire), 'base64'];
  else if (encoding === 'base58') transaction = [b58.decode(r.wire), 'base58'];
  else {
    const header = {
      numRequiredSignatures: r.header.numSignerAccounts,
      numReadonlySignedAccounts: r.header.numReadonlySignerAccounts,
      numReadonlyUnsignedAccounts: r.header.numReadonlyNonSignerAccounts,
    };
    const message =
      encoding === 'jsonParsed'
        ? {
            accountKeys: r.accountKeys.map((pubkey, i) => ({ pubkey, signer: i < r.header.numSignerAccounts, writable: isWritable(r, i), source: 'transaction' })),
            recentBlockhash: r.recentBlockhash,
            instructions: r.instructions.map((ix) => parsedInstruction(r, ix, decimalsOf)),
          }
        : {
            accountKeys: r.accountKeys,
            header,
            recentBlockhash: r.recentBlockhash,
            instructions: r.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: b58.decode(ix.data), stackHeight: null })),
          };
    transaction = { signatures: r.signatures, message };
  }
  return { slot: r.slot, blockTime: r.blockTime, version, transaction, meta };
}

/** An account in the requested encoding; jsonParsed is served for SPL token accounts and mints only. */
export function accountJson(acc: { lamports: bigint; programAddress: string; data: Uint8Array; executable: boolean }, encoding: Encoding, decimalsOf: (mint: Address) => number | undefined) {
  const base = { lamports: acc.lamports, owner: acc.programAddress, executable: acc.executable, rentEpoch: 18446744073709551615n, space: acc.data.length };
  if (encoding === 'jsonParsed' && isTokenProgram(acc.programAddress)) {
    const program = acc.programAddress === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' ? 'spl-token' : 'spl-token-2022';
    const t = readTokenAccount(acc.data);
    if (t) {
      const decimals = decimalsOf(t.mint) ?? 0;
      const info = {
        isNative: false,
        mint: t.mint,
        owner: t.owner,
        state: 'initialized',
        tokenAmount: uiTokenAmount(t.amount, decimals),
        ...(t.delegate ? { delegate: t.delegate, delegatedAmount: uiTokenAmount(t.delegatedAmount, decimals) } : {}),
      };
      return { ...base, data: { program, parsed: { type: 'account', info }, space: acc.data.length } };
    }
    const decimals = readMintDecimals(acc.data);
    if (decimals !== undefined) {
      const view = new DataView(acc.data.buffer, acc.data.byteOffset, acc.data.byteLength);
      const info = { decimals, isInitialized: true, supply: view.getBigUint64(36, true).toString(), mintAuthority: null, freezeAuthority: null };
      return { ...base, data: { program, parsed: { type: 'mint', info }, space: acc.data.length } };
    }
  }
  if (encoding === 'base58') return { ...base, data: [b58.decode(acc.data), 'base58'] };
  return { ...base, data: [b64.decode(acc.data), 'base64'] };
}
