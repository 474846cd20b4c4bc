// @tollgate/devchain: a local anvil chain with test stablecoins, for `npm start` and integration
// tests. A library: every setting is an explicit option; nothing here reads process.env.
export {
  DEFAULT_ANVIL_ACCOUNTS,
  resolveAnvilBinary,
  startAnvil,
  type AnvilHandle,
  type DevAccount,
  type StartAnvilOptions,
} from './anvil.ts';
export { DEFAULT_FUND_AMOUNT, startDevChain, type DevChain, type StartDevChainOptions } from './devchain.ts';
export { rpcRequest, type RpcRequestOptions } from './rpc.ts';
export { startRpcProxy, type LimitStyle, type RpcFault, type RpcFaultMode, type RpcLimits, type RpcProxy, type RpcProxyStats } from './rpc-proxy.ts';
export {
  EXAMPLE_ADAPTER_DOMAIN,
  deploySettlement,
  deployTestTether,
  type DeploySettlementOptions,
  type DeployTestTetherOptions,
  type SettlementDeployment,
} from './settlement.ts';
export { mine, placeContract, reorg, setAutomine, setIntervalMining, shortString, type ReorgReplay } from './testing.ts';
export {
  TEST_TOKEN_SPECS,
  deployTestTokens,
  fundPayers,
  localChain,
  publicClientFor,
  sendPipelined,
  transferToken,
  type DeployTestTokensOptions,
  type FundPayersOptions,
  type TestTokenInfo,
  type TransferTokenOptions,
  type UsdtFlavour,
} from './tokens.ts';
