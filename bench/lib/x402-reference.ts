// The REFERENCE x402 v2 facilitator, served the way coinbase/x402's TypeScript facilitator example
// serves it: @x402/core's x402Facilitator with @x402/evm's exact EVM facilitator scheme over a viem
// wallet client, behind express (POST /verify, POST /settle, GET /supported). Unmodified packages;
// only the chain (the bench's anvil) and two settings differ from the example, both to make the
// comparison fair: the receipt polling interval equals Tollgate's (100 ms; viem's default on HTTP
// is 4 s), and the account has viem's nonce manager so concurrent settles do not reuse a nonce.
//
//   RPC_URL=… CHAIN_ID=31337 KEY=0x… npx tsx bench/lib/x402-reference.ts   → "listening on http://…"
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import express from 'express';
import { createWalletClient, defineChain, http, nonceManager, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const chainId = Number(process.env.CHAIN_ID);
const rpcUrl = process.env.RPC_URL!;
const account = privateKeyToAccount(process.env.KEY as Hex, { nonceManager });
const chain = defineChain({ id: chainId, name: 'bench', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } });
const viem = createWalletClient({ account, chain, transport: http(rpcUrl), pollingInterval: 100 }).extend(publicActions);

const signer = toFacilitatorEvmSigner({
  address: account.address,
  getCode: (args) => viem.getCode(args),
  readContract: (args) => viem.readContract({ ...args, args: args.args ?? [] } as never),
  verifyTypedData: (args) => viem.verifyTypedData(args as never),
  writeContract: (args) => viem.writeContract({ ...args, args: args.args ?? [] } as never),
  sendTransaction: (args) => viem.sendTransaction(args),
  waitForTransactionReceipt: (args) => viem.waitForTransactionReceipt(args),
});
const facilitator = new x402Facilitator().register(`eip155:${chainId}`, new ExactEvmScheme(signer));

const app = express();
app.use(express.json());
app.post('/verify', async (req, res) => {
  try {
    const { paymentPayload, paymentRequirements } = req.body as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
    res.json(await facilitator.verify(paymentPayload, paymentRequirements));
  } catch (err) {
    res.status(500).json({ error: err instanceof Error ? err.message : String(err) });
  }
});
app.post('/settle', async (req, res) => {
  try {
    const { paymentPayload, paymentRequirements } = req.body as { paymentPayload: PaymentPayload; paymentRequirements: PaymentRequirements };
    res.json(await facilitator.settle(paymentPayload, paymentRequirements));
  } catch (err) {
    res.status(500).json({ error: err instanceof Error ? err.message : String(err) });
  }
});
app.get('/supported', (_req, res) => void res.json(facilitator.getSupported()));
const server = app.listen(0, '127.0.0.1', () => {
  const a = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${a.port}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
