/** `tollgate settlement …` usage (kept apart so `tollgate --help` does not load cli/settlement.ts and viem's accounts). */
export const SETTLEMENT_USAGE = `  settlement status --chain ID              contract check (code, executor, owner, paused), pool balances, executor gas
  settlement pending --chain ID             executor transactions not final yet, and why
  settlement deploy --chain ID --rpc-url URL [--executor 0x…]
                                            deploy TollgateSettlement (owner = the owner key, executor = the gateway's)
  settlement pause|unpause --chain ID --rpc-url URL --contract 0x…
  settlement rotate-executor 0x… --chain ID --rpc-url URL --contract 0x…
  settlement transfer-ownership 0x… --chain ID --rpc-url URL --contract 0x…   (step 1 of 2)
  settlement accept-ownership --chain ID --rpc-url URL --contract 0x…        (step 2, by the new owner's key)
      owner-key commands read the key from --owner-key-file FILE, else OWNER_KEY, else a prompt`;
