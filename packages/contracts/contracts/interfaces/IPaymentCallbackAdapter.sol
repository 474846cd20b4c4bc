// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IPaymentCallbackAdapter
/// @notice What a merchant's callback contract implements so that a DELEGATE payment can trigger
///         on-chain logic. The settlement contract (the gateway's `core_address`) transfers `amount`
///         of `token` to the adapter and then calls `onPaymentCallback` in the same transaction; a
///         revert or a `false` return undoes the transfer as well.
/// @dev `calldata_` is empty when the order carried no payer-signed calldata. Otherwise it is the
///      ABI encoding of the tuple
///      `(bytes32 orderId, bytes calldata, uint256 calldataNonce, uint256 deadline, bytes signature)`
///      (see `CallbackEnvelope` in TollgateSettlement.sol and `src/envelope.ts`), whose signature the
///      settlement contract has already verified against `payer` under the adapter's EIP-712 domain.
interface IPaymentCallbackAdapter {
    function onPaymentCallback(address payer, address token, uint256 amount, bytes calldata calldata_)
        external
        returns (bool success);
}
