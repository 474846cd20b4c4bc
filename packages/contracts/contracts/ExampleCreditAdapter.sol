// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPaymentCallbackAdapter} from "./interfaces/IPaymentCallbackAdapter.sol";

interface IAdapterToken {
    function balanceOf(address account) external view returns (uint256);
}

/// @title ExampleCreditAdapter
/// @notice A merchant's callback adapter that credits an in-app balance (a game account, a prepaid
///         plan) when a DELEGATE payment settles. It follows every adapter rule of the gateway:
///         1. only allowlisted core addresses (the settlement contract) may call it;
///         2. the payer must be non-zero;
///         3. the amount must have actually arrived (checked against the tokens it has accounted for);
///         4. `calldata_` is bounded and its structure checked (envelope → one 32-byte account id);
///         5. a reentrancy guard on every state-changing entry point;
///         6. an event for every credit, for off-chain tracking.
/// @dev With calldata, the payer chose which in-app account to credit (`bytes32 accountId`) and
///      signed it; the settlement contract verified that signature under this contract's EIP-712
///      domain (`eip712Domain()` below) before calling. Without calldata, the payer's own address
///      is the account. Copy it as a starting point; it is deliberately small.
contract ExampleCreditAdapter is IPaymentCallbackAdapter {
    /// @notice Largest envelope accepted: 8 KiB of calldata plus the envelope's fixed fields.
    uint256 public constant MAX_ENVELOPE_BYTES = 8192 + 512;
    /// @dev Smallest well-formed envelope: five head words plus two length words.
    uint256 private constant MIN_ENVELOPE_BYTES = 7 * 32;

    string private _name;
    string private _version;

    address public owner;
    mapping(address core => bool) public isCore;
    mapping(address token => bool) public acceptedToken;
    /// @notice Tokens received through callbacks and not withdrawn; the amount check relies on it.
    mapping(address token => uint256) public accounted;
    /// @notice The visible effect: in-app credit per account and token, in token base units.
    mapping(bytes32 account => mapping(address token => uint256)) public credits;
    mapping(bytes32 orderId => bool) public orderCredited;
    uint256 private _lock = 1;

    event Credited(
        bytes32 indexed account, address indexed payer, address indexed token, uint256 amount, bytes32 orderId
    );
    event CoreSet(address indexed core, bool allowed);
    event TokenSet(address indexed token, bool accepted);
    event Withdrawn(address indexed token, address indexed to, uint256 amount);

    error NotOwner(address caller);
    error NotCore(address caller);
    error ZeroAddress();
    error ZeroPayer();
    error ZeroAmount();
    error TokenNotAccepted(address token);
    error AmountNotReceived(uint256 expected, uint256 available);
    error CalldataTooLarge(uint256 length, uint256 max);
    error MalformedCalldata();
    error InvalidAccount();
    error OrderAlreadyCredited(bytes32 orderId);
    error Reentrancy();
    error TransferFailed(address token);

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        _;
    }

    modifier nonReentrant() {
        if (_lock != 1) revert Reentrancy();
        _lock = 2;
        _;
        _lock = 1;
    }

    /// @param core the gateway's core address (GET /admin/v1/chains → delegate.core_address)
    /// @param token the stablecoin accepted at deployment (more via setAcceptedToken)
    constructor(string memory name_, string memory version_, address core, address token) {
        if (core == address(0) || token == address(0)) revert ZeroAddress();
        _name = name_;
        _version = version_;
        owner = msg.sender;
        isCore[core] = true;
        acceptedToken[token] = true;
        emit CoreSet(core, true);
        emit TokenSet(token, true);
    }

    /// @inheritdoc IPaymentCallbackAdapter
    function onPaymentCallback(address payer, address token, uint256 amount, bytes calldata calldata_)
        external
        nonReentrant
        returns (bool)
    {
        if (!isCore[msg.sender]) revert NotCore(msg.sender);
        if (payer == address(0)) revert ZeroPayer();
        if (!acceptedToken[token]) revert TokenNotAccepted(token);
        if (amount == 0) revert ZeroAmount();
        // The core transfers `amount` before calling: it must be here, on top of what earlier
        // callbacks already accounted for.
        uint256 unaccounted = IAdapterToken(token).balanceOf(address(this)) - accounted[token];
        if (unaccounted < amount) revert AmountNotReceived(amount, unaccounted);
        accounted[token] += amount;

        bytes32 account = bytes32(uint256(uint160(payer)));
        bytes32 orderId;
        if (calldata_.length != 0) {
            (orderId, account) = _decodeEnvelope(calldata_);
            if (orderCredited[orderId]) revert OrderAlreadyCredited(orderId);
            orderCredited[orderId] = true;
        }
        credits[account][token] += amount;
        emit Credited(account, payer, token, amount, orderId);
        return true;
    }

    /// @notice EIP-5267: the domain payers sign `Eip3009CallbackData` under. Register the same
    ///         name and version with the gateway (`eip712_name`, `eip712_version`).
    function eip712Domain()
        external
        view
        returns (bytes1, string memory, string memory, uint256, address, bytes32, uint256[] memory)
    {
        return (hex"0f", _name, _version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- owner

    function setCore(address core, bool allowed) external onlyOwner {
        if (core == address(0)) revert ZeroAddress();
        isCore[core] = allowed;
        emit CoreSet(core, allowed);
    }

    function setAcceptedToken(address token, bool accepted) external onlyOwner {
        if (token == address(0)) revert ZeroAddress();
        acceptedToken[token] = accepted;
        emit TokenSet(token, accepted);
    }

    /// @notice Takes the merchant's revenue out; credits stay (they are the users' in-app value).
    function withdraw(address token, address to, uint256 amount) external onlyOwner nonReentrant {
        if (to == address(0)) revert ZeroAddress();
        accounted[token] -= amount;
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok && ret.length != 0) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret)) // the token's own reason
            }
        }
        // USDT-style tokens return nothing; others must return true.
        if (!ok || (ret.length != 0 && (ret.length < 32 || abi.decode(ret, (uint256)) != 1))) {
            revert TransferFailed(token);
        }
        emit Withdrawn(token, to, amount);
    }

    // ---------------------------------------------------------------- internals

    /// @dev Envelope = abi.encode(bytes32 orderId, bytes calldata, uint256 calldataNonce,
    ///      uint256 deadline, bytes signature); this adapter's calldata is abi.encode(bytes32 account).
    function _decodeEnvelope(bytes calldata envelope) private pure returns (bytes32 orderId, bytes32 account) {
        if (envelope.length > MAX_ENVELOPE_BYTES) revert CalldataTooLarge(envelope.length, MAX_ENVELOPE_BYTES);
        if (envelope.length < MIN_ENVELOPE_BYTES) revert MalformedCalldata();
        bytes memory data;
        (orderId, data,,,) = abi.decode(envelope, (bytes32, bytes, uint256, uint256, bytes));
        if (data.length != 32) revert MalformedCalldata();
        account = abi.decode(data, (bytes32));
        if (account == bytes32(0)) revert InvalidAccount();
    }
}
