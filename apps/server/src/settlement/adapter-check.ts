import { getAddress, parseAbi, type Hex, type PublicClient } from 'viem';
import { describeError } from '../chain/evm/rpc.ts';

/**
 * Is `callback_contract` an adapter the settlement contract can call for DELEGATE orders? Read
 * at registration (POST /admin/v1/merchants/{id}/callbacks), so a merchant learns of a wrong
 * address or domain then, not when the first paid order fails at settlement with the payer's funds
 * stranded. The contract checks exactly this on every callback with signed calldata
 * (TollgateSettlement._adapterDomainSeparator): EIP-5267 `eip712Domain()` answering with fields
 * 0x0f (name, version, chainId, verifyingContract), the chain's id and the adapter's own address;
 * and the order API issues signing requests under the registered name and version, so those must
 * be the adapter's too.
 */

const EIP5267 = parseAbi(['function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)']);

export type AdapterProblem =
  | { code: 'adapter_no_code'; message: string }
  | { code: 'adapter_domain_missing'; message: string }
  /** `field`: the registration's body field to fix, or the domain field that is wrong on chain */
  | { code: 'adapter_domain_mismatch'; message: string; field: 'eip712_name' | 'eip712_version' | 'fields' | 'chainId' | 'verifyingContract' }
  | { code: 'unreachable'; message: string };

export type AdapterReader = Pick<PublicClient, 'getCode' | 'readContract'>;

/**
 * Undefined when the adapter is usable as registered, else the first problem found.
 *
 * @example
 * const p = await checkAdapter(client, { chainId: 137, address, eip712Name: 'My Adapter', eip712Version: '1' });
 * if (p) throw new AppError(p.code, p.message);
 */
export async function checkAdapter(reader: AdapterReader, r: { chainId: number; address: Hex; eip712Name: string; eip712Version: string }): Promise<AdapterProblem | undefined> {
  let code: Hex | undefined;
  try {
    code = await reader.getCode({ address: r.address });
  } catch (err) {
    return { code: 'unreachable', message: `chain ${r.chainId} could not be read: ${describeError(err)}` };
  }
  if (!code || code === '0x') return { code: 'adapter_no_code', message: `no contract code at ${r.address.toLowerCase()} on chain ${r.chainId}: deploy the adapter first` };
  let domain: readonly [Hex, string, string, bigint, Hex, Hex, readonly bigint[]];
  try {
    domain = await reader.readContract({ address: r.address, abi: EIP5267, functionName: 'eip712Domain' });
  } catch (err) {
    // A revert or an undecodable answer is a missing function; a transport fault is not.
    if (!/revert|decode|returned no data|zero data|out of bounds/i.test(describeError(err))) return { code: 'unreachable', message: `chain ${r.chainId} could not be read: ${describeError(err)}` };
    return { code: 'adapter_domain_missing', message: `${r.address.toLowerCase()} has no EIP-5267 eip712Domain() the settlement contract can read (it answers with the adapter's EIP-712 domain)` };
  }
  const [fields, name, version, chainId, verifyingContract] = domain;
  const mismatch = (field: Extract<AdapterProblem, { code: 'adapter_domain_mismatch' }>['field'], message: string): AdapterProblem => ({ code: 'adapter_domain_mismatch', field, message });
  if (fields.toLowerCase() !== '0x0f') return mismatch('fields', `eip712Domain() fields is ${fields}, expected 0x0f (name, version, chainId, verifyingContract and nothing else)`);
  if (name !== r.eip712Name) return mismatch('eip712_name', `eip712_name ${JSON.stringify(r.eip712Name)} differs from the adapter's eip712Domain() name ${JSON.stringify(name)}`);
  if (version !== r.eip712Version) return mismatch('eip712_version', `eip712_version ${JSON.stringify(r.eip712Version)} differs from the adapter's eip712Domain() version ${JSON.stringify(version)}`);
  if (chainId !== BigInt(r.chainId)) return mismatch('chainId', `eip712Domain() chainId is ${chainId}, expected ${r.chainId}`);
  if (getAddress(verifyingContract) !== getAddress(r.address)) {
    return mismatch('verifyingContract', `eip712Domain() verifyingContract is ${verifyingContract.toLowerCase()}, expected the adapter's own address ${r.address.toLowerCase()}`);
  }
  return undefined;
}
