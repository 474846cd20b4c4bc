// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPaymentCallbackAdapter} from "./interfaces/IPaymentCallbackAdapter.sol";
import {IEip5267, IPermit, IReceiveWithAuthorization, ISettlementToken} from "./interfaces/ISettlementTokens.sol";

/// @title TollgateSettlement
/// @notice Settles DELEGATE orders, one chain, one pooled contract. It is both the `spent_address`
///         (payers' funds sit here until settlement) and the `core_address` (the only caller that
///         merchant callback adapters allowlist). One call pays the order's amount to the merchant
///         wallet, or to the merchant's callback adapter and then calls `onPaymentCallback` — all in
///         one transaction: a failed callback undoes the payout, and for the pull variants the pull
///         from the payer as well.
/// @dev Why one pooled contract per chain and not a CREATE2 deposit address per order: the wire
///      format names ONE `spent_address` per chain (it is in every callback registration and in
///      the payer-signed `Eip3009CallbackData.owner`), a plain `transfer` to `payToAddress` must
///      work without any per-order deployment (~45k gas each, paid before the order is even
///      settled), and the once-per-order rule is a single mapping here. The price is that pooled
///      funds are attributed to orders off chain, so the executor key is trusted with the pool:
///      the owner can rotate it and pause the contract, and no function lets anyone but a payer
///      (refund) or a merchant/adapter (settlement) receive funds.
///      No fee is taken on chain: Tollgate charges fees from the merchant's prepaid fee balance.
contract TollgateSettlement {
    // ---------------------------------------------------------------- types

    /// @notice An order moves from None exactly once, to Settled or to Refunded.
    enum OrderState { None, Settled, Refunded }

    /// @notice Where the order's funds come from in this call.
    enum Source {
        Pool, // already here (a plain transfer or a relayed transferWithAuthorization to this contract)
        Authorization, // EIP-3009 receiveWithAuthorization from the payer, in this call
        Permit, // EIP-2612 permit, then transferFrom, in this call
        Allowance // transferFrom against an allowance the payer gave earlier
    }

    /// @notice One DELEGATE order. `orderId` is keccak256 of the UTF-8 order id (`ord_…`).
    struct Order {
        bytes32 orderId;
        address payer;
        address token;
        uint256 amount;
        /// Merchant wallet (callback false) or the registered callback adapter (callback true).
        address payee;
        bool callback;
    }

    /// @notice The payer-signed callback calldata (`callback_calldata`) with the fields of its
    ///         EIP-712 `Eip3009CallbackData` message. All empty/zero when no calldata was signed.
    struct CallbackData {
        bytes data;
        uint256 calldataNonce;
        uint256 deadline;
        bytes signature;
    }

    /// @notice An EIP-3009 `receiveWithAuthorization` signed by the payer with `to` = this contract.
    struct Authorization {
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    /// @notice An EIP-2612 permit signed by the payer with `spender` = this contract.
    struct Permit {
        uint256 value;
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    // ---------------------------------------------------------------- constants and state

    /// @notice The struct adapters' payers sign (field order fixed by the wire format).
    bytes32 public constant EIP3009_CALLBACK_DATA_TYPEHASH = keccak256(
        "Eip3009CallbackData(address token,address owner,address payer,uint256 amount,bytes32 orderId,uint256 calldataNonce,uint256 deadline,bytes32 calldataHash)"
    );
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// @notice Upper bound of `callback_calldata`, the same 8 KiB the order API accepts.
    uint256 public constant MAX_CALLDATA_BYTES = 8192;
    /// @dev A callback's revert data is copied into our own revert up to this many bytes: enough
    ///      for any custom error with a few arguments, and a hostile adapter cannot make the
    ///      executor pay for copying megabytes.
    uint256 private constant MAX_REVERT_BYTES = 1024;
    uint256 private constant SECP256K1_HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public owner;
    address public pendingOwner;
    address public executor;
    bool public paused;
    mapping(bytes32 orderId => OrderState) public orderState;
    uint256 private _lock = 1;

    // ---------------------------------------------------------------- events and errors

    event Settled(
        bytes32 indexed orderId,
        address indexed payer,
        address indexed payee,
        address token,
        uint256 amount,
        bool callback,
        Source source
    );
    event Refunded(bytes32 indexed orderId, address indexed payer, address token, uint256 amount);
    event ExecutorChanged(address indexed previousExecutor, address indexed newExecutor);
    event OwnershipTransferStarted(address indexed previousOwner, address indexed newOwner);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event PausedSet(bool paused);

    error NotOwner(address caller);
    error NotPendingOwner(address caller);
    error NotExecutor(address caller);
    error ZeroAddress();
    error ZeroAmount();
    error Reentrancy();
    error ContractPaused();
    error OrderAlreadyProcessed(bytes32 orderId, OrderState state);
    error InsufficientPool(address token, uint256 balance, uint256 needed);
    error AmountMismatch(uint256 expected, uint256 received);
    error TokenCallFailed(address token);
    error CalldataWithoutCallback();
    error CalldataTooLarge(uint256 length, uint256 max);
    error UnsignedCalldata();
    error CalldataSignatureExpired(uint256 deadline, uint256 timestamp);
    error InvalidCalldataSignature(address expected, address recovered);
    error CallbackNotContract(address callback);
    error CallbackDomainUnsupported(address callback);
    error CallbackReverted(address callback, bytes reason);
    error CallbackRejected(address callback);

    // ---------------------------------------------------------------- modifiers

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    /// @dev Order matters: the guard runs first, so a re-entry by the executor itself (e.g. an
    ///      executor that is a contract) is stopped as such, before any other check.
    modifier guarded() {
        if (_lock != 1) revert Reentrancy();
        _lock = 2;
        if (msg.sender != executor) revert NotExecutor(msg.sender);
        if (paused) revert ContractPaused();
        _;
        _lock = 1;
    }

    constructor(address owner_, address executor_) {
        if (owner_ == address(0) || executor_ == address(0)) revert ZeroAddress();
        owner = owner_;
        executor = executor_;
        emit OwnershipTransferred(address(0), owner_);
        emit ExecutorChanged(address(0), executor_);
    }

    // ---------------------------------------------------------------- settlement (executor)

    /// @notice Settles an order whose funds already sit in this contract.
    function settle(Order calldata order, CallbackData calldata cb) external guarded {
        _claimOrder(order);
        uint256 pool = _poolOf(order.token);
        if (pool < order.amount) revert InsufficientPool(order.token, pool, order.amount);
        _payOut(order, cb, Source.Pool);
    }

    /// @notice Pulls the payer's EIP-3009 authorization and settles, in one transaction.
    /// @dev receiveWithAuthorization, not transferWithAuthorization: only this contract (the
    ///      payee) can submit it, so nobody can front-run the pull and make settlement revert.
    function settleWithAuthorization(Order calldata order, CallbackData calldata cb, Authorization calldata auth)
        external
        guarded
    {
        _claimOrder(order);
        uint256 before = _poolOf(order.token);
        IReceiveWithAuthorization(order.token).receiveWithAuthorization(
            order.payer, address(this), order.amount, auth.validAfter, auth.validBefore, auth.nonce, auth.v, auth.r, auth.s
        );
        _requireReceived(order, before);
        _payOut(order, cb, Source.Authorization);
    }

    /// @notice Applies the payer's EIP-2612 permit, pulls the amount and settles.
    /// @dev A permit is public once broadcast: if someone else submitted it first, the allowance it
    ///      granted is already in place, so a failing `permit` is ignored and `transferFrom`
    ///      decides (the pattern OpenZeppelin recommends against permit front-running).
    function settleWithPermit(Order calldata order, CallbackData calldata cb, Permit calldata p) external guarded {
        _claimOrder(order);
        try IPermit(order.token).permit(order.payer, address(this), p.value, p.deadline, p.v, p.r, p.s) {} catch {}
        _pullFrom(order);
        _payOut(order, cb, Source.Permit);
    }

    /// @notice Pulls the amount against an allowance the payer gave this contract, and settles.
    function settleFromAllowance(Order calldata order, CallbackData calldata cb) external guarded {
        _claimOrder(order);
        _pullFrom(order);
        _payOut(order, cb, Source.Allowance);
    }

    /// @notice Returns a pooled payment to its payer, for an order that was never settled (failed
    ///         callback, missing signature at expiry). Marks the order so it can never settle.
    function refund(bytes32 orderId, address payer, address token, uint256 amount) external guarded {
        if (payer == address(0) || token == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (token.code.length == 0) revert TokenCallFailed(token);
        _claim(orderId, OrderState.Refunded);
        uint256 pool = _poolOf(token);
        if (pool < amount) revert InsufficientPool(token, pool, amount);
        _safeTransfer(token, payer, amount);
        emit Refunded(orderId, payer, token, amount);
    }

    // ---------------------------------------------------------------- administration (owner)

    /// @notice Replaces the executor key (e.g. after a suspected leak); effective immediately.
    function setExecutor(address newExecutor) external onlyOwner {
        if (newExecutor == address(0)) revert ZeroAddress();
        emit ExecutorChanged(executor, newExecutor);
        executor = newExecutor;
    }

    /// @notice Stops settlements and refunds until unpaused (e.g. while rotating a leaked key).
    function setPaused(bool paused_) external onlyOwner {
        paused = paused_;
        emit PausedSet(paused_);
    }

    /// @notice Step one of two: names the next owner, who must accept. A typo cannot lock the contract.
    function transferOwnership(address newOwner) external onlyOwner {
        pendingOwner = newOwner;
        emit OwnershipTransferStarted(owner, newOwner);
    }

    /// @notice Step two: the pending owner takes over.
    function acceptOwnership() external {
        if (msg.sender != pendingOwner || msg.sender == address(0)) revert NotPendingOwner(msg.sender);
        emit OwnershipTransferred(owner, msg.sender);
        owner = msg.sender;
        pendingOwner = address(0);
    }

    // ---------------------------------------------------------------- internals

    /// @dev First step of every settlement, before any token moves: validates the order and takes
    ///      its once-only slot, so a replay fails as such and never pulls anything.
    function _claimOrder(Order calldata order) private {
        if (order.payer == address(0) || order.token == address(0) || order.payee == address(0)) revert ZeroAddress();
        if (order.amount == 0) revert ZeroAmount();
        if (order.token.code.length == 0) revert TokenCallFailed(order.token);
        _claim(order.orderId, OrderState.Settled);
    }

    function _payOut(Order calldata order, CallbackData calldata cb, Source source) private {
        bytes memory calldata_;
        if (!order.callback) {
            if (cb.data.length != 0 || cb.signature.length != 0) revert CalldataWithoutCallback();
        } else {
            if (order.payee.code.length == 0) revert CallbackNotContract(order.payee);
            if (cb.signature.length != 0) {
                _verifyCalldataSignature(order, cb);
                calldata_ = abi.encode(order.orderId, cb.data, cb.calldataNonce, cb.deadline, cb.signature);
            } else if (cb.data.length != 0) {
                revert UnsignedCalldata();
            }
        }

        _safeTransfer(order.token, order.payee, order.amount);
        if (order.callback) _callAdapter(order, calldata_);
        emit Settled(order.orderId, order.payer, order.payee, order.token, order.amount, order.callback, source);
    }

    /// @dev The once-per-order rule: an order moves from None exactly once, to Settled or Refunded.
    function _claim(bytes32 orderId, OrderState to) private {
        OrderState current = orderState[orderId];
        if (current != OrderState.None) revert OrderAlreadyProcessed(orderId, current);
        orderState[orderId] = to;
    }

    /// @dev Checks the payer's EIP-712 `Eip3009CallbackData` signature under the adapter's own
    ///      domain, read from its EIP-5267 `eip712Domain()`, so no adapter ever runs calldata the
    ///      payer did not sign for exactly this token, pool, amount and order — even an adapter
    ///      that forgets to check.
    function _verifyCalldataSignature(Order calldata order, CallbackData calldata cb) private view {
        if (cb.data.length > MAX_CALLDATA_BYTES) revert CalldataTooLarge(cb.data.length, MAX_CALLDATA_BYTES);
        if (block.timestamp > cb.deadline) revert CalldataSignatureExpired(cb.deadline, block.timestamp);
        bytes32 structHash = keccak256(
            abi.encode(
                EIP3009_CALLBACK_DATA_TYPEHASH,
                order.token,
                address(this),
                order.payer,
                order.amount,
                order.orderId,
                cb.calldataNonce,
                cb.deadline,
                keccak256(cb.data)
            )
        );
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", _adapterDomainSeparator(order.payee), structHash));
        address recovered = _recover(digest, cb.signature);
        if (recovered != order.payer) revert InvalidCalldataSignature(order.payer, recovered);
    }

    function _adapterDomainSeparator(address adapter) private view returns (bytes32) {
        try IEip5267(adapter).eip712Domain() returns (
            bytes1 fields, string memory name, string memory version, uint256 chainId, address verifyingContract, bytes32, uint256[] memory
        ) {
            // Exactly name, version, chainId, verifyingContract: the domain the order API issues.
            if (fields != hex"0f" || chainId != block.chainid || verifyingContract != adapter) {
                revert CallbackDomainUnsupported(adapter);
            }
            return keccak256(abi.encode(EIP712_DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), chainId, adapter));
        } catch {
            revert CallbackDomainUnsupported(adapter);
        }
    }

    /// @dev Returns address(0) for anything but a canonical 65-byte signature (low s, v 27/28).
    function _recover(bytes32 digest, bytes calldata sig) private pure returns (address) {
        if (sig.length != 65) return address(0);
        bytes32 r = bytes32(sig[0:32]);
        bytes32 s = bytes32(sig[32:64]);
        uint8 v = uint8(sig[64]);
        if (uint256(s) > SECP256K1_HALF_N || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// @dev Calls the adapter; any revert (with its reason, bounded) or a return other than
    ///      exactly `true` reverts the whole settlement.
    function _callAdapter(Order calldata order, bytes memory calldata_) private {
        bytes memory payload = abi.encodeCall(
            IPaymentCallbackAdapter.onPaymentCallback, (order.payer, order.token, order.amount, calldata_)
        );
        address adapter = order.payee;
        bool ok;
        uint256 returned;
        uint256 size;
        assembly ("memory-safe") {
            ok := call(gas(), adapter, 0, add(payload, 0x20), mload(payload), 0, 0)
            size := returndatasize()
            if and(ok, gt(size, 31)) {
                returndatacopy(0, 0, 0x20)
                returned := mload(0)
            }
        }
        if (!ok) {
            if (size > MAX_REVERT_BYTES) size = MAX_REVERT_BYTES;
            bytes memory reason = new bytes(size);
            assembly ("memory-safe") {
                returndatacopy(add(reason, 0x20), 0, size)
            }
            revert CallbackReverted(adapter, reason);
        }
        if (size < 32 || returned != 1) revert CallbackRejected(adapter);
    }

    /// @dev transferFrom payer → this, then checks the exact balance delta, so fee-on-transfer or
    ///      otherwise misbehaving tokens cannot settle an order for less than it is worth.
    function _pullFrom(Order calldata order) private {
        uint256 before = _poolOf(order.token);
        _callToken(order.token, abi.encodeWithSelector(0x23b872dd, order.payer, address(this), order.amount));
        _requireReceived(order, before);
    }

    function _requireReceived(Order calldata order, uint256 before) private view {
        uint256 received = _poolOf(order.token) - before;
        if (received != order.amount) revert AmountMismatch(order.amount, received);
    }

    function _poolOf(address token) private view returns (uint256) {
        return ISettlementToken(token).balanceOf(address(this));
    }

    function _safeTransfer(address token, address to, uint256 amount) private {
        _callToken(token, abi.encodeWithSelector(0xa9059cbb, to, amount));
    }

    /// @dev Accepts tokens that return nothing (USDT on Ethereum) as well as `true`; reverts on a
    ///      revert or a `false`. (An address without code never gets here: _claimOrder and refund
    ///      refuse it, since a call to it would "succeed" with no return data.)
    function _callToken(address token, bytes memory data) private {
        (bool ok, bytes memory ret) = token.call(data);
        // A token's own revert reason (e.g. InsufficientAllowance) is passed through unchanged.
        if (!ok && ret.length != 0) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        if (!ok || (ret.length != 0 && (ret.length < 32 || abi.decode(ret, (uint256)) != 1))) {
            revert TokenCallFailed(token);
        }
    }
}
