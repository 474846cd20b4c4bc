// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title TestToken
/// @notice A USDC-shaped ERC-20 for local chains and tests: 6 decimals, EIP-2612 `permit` and
///         EIP-3009 transfer/receive/cancel authorizations, with the same EIP-712 domain shape as
///         USDC (name = token name, version "2").
/// @dev THIS IS A TEST TOKEN. `mint` is callable by anyone, so it has no value and must never be
///      deployed where it could be mistaken for money. Self-contained on purpose (no OpenZeppelin):
///      the artifact is compiled offline with solcjs and committed.
contract TestToken {
    // ---------------------------------------------------------------- ERC-20 state

    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    // ---------------------------------------------------------------- EIP-712 / 2612 / 3009 state

    /// @notice EIP-712 domain version; "2" as in USDC's FiatTokenV2, so signing code is shared.
    string public constant version = "2";

    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    /// @dev Upper bound of a canonical secp256k1 `s` (n / 2): rejects the malleable twin signature.
    uint256 private constant SECP256K1_HALF_N =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice EIP-2612 nonces (sequential per owner).
    mapping(address => uint256) public nonces;
    /// @dev EIP-3009 nonces are random 32-byte values; true once used or canceled.
    mapping(address => mapping(bytes32 => bool)) private _authorizationStates;

    // The separator is cached for the deployment chain and recomputed if the chain id changes
    // (e.g. a forked chain), so a signature for one chain never verifies on another.
    bytes32 private immutable _hashedName;
    uint256 private immutable _cachedChainId;
    bytes32 private immutable _cachedDomainSeparator;

    // ---------------------------------------------------------------- events and errors

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    error InvalidAddress(address account);
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 needed);
    error InvalidSignature();
    error PermitExpired(uint256 deadline);
    error AuthorizationNotYetValid(uint256 validAfter);
    error AuthorizationExpired(uint256 validBefore);
    error AuthorizationAlreadyUsed(address authorizer, bytes32 nonce);
    error CallerMustBePayee(address caller, address payee);

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
        _hashedName = keccak256(bytes(name_));
        _cachedChainId = block.chainid;
        _cachedDomainSeparator = _buildDomainSeparator();
    }

    // ---------------------------------------------------------------- test-only minting

    /// @notice Mints `amount` to `to`. Callable by ANYONE: this is a test token.
    function mint(address to, uint256 amount) external {
        if (to == address(0)) revert InvalidAddress(to);
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _approve(msg.sender, spender, value);
        return true;
    }

    /// @dev An allowance of type(uint256).max is treated as infinite and never decremented.
    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance(from, msg.sender, allowed, value);
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
        return true;
    }

    // ---------------------------------------------------------------- EIP-712 domain

    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == _cachedChainId ? _cachedDomainSeparator : _buildDomainSeparator();
    }

    /// @notice EIP-5267 domain description, so clients (e.g. viem `getEip712Domain`) can read it.
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version_,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", name, version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- EIP-2612

    function permit(
        address owner,
        address spender,
        uint256 value,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        if (block.timestamp > deadline) revert PermitExpired(deadline);
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, nonces[owner]++, deadline));
        _requireSignedBy(owner, structHash, v, r, s);
        _approve(owner, spender, value);
    }

    // ---------------------------------------------------------------- EIP-3009

    /// @notice True if the authorization `nonce` of `authorizer` was used or canceled.
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    /// @notice Executes a transfer signed by `from`; anyone may submit it (a relayer pays the gas).
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _useAuthorization(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s);
        _transfer(from, to, value);
    }

    /// @notice Like `transferWithAuthorization`, but only the payee may submit it, which prevents
    ///         front-running a deposit made through a contract.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        if (to != msg.sender) revert CallerMustBePayee(msg.sender, to);
        _useAuthorization(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce, v, r, s);
        _transfer(from, to, value);
    }

    /// @notice Cancels an unused authorization, signed by its authorizer.
    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        if (_authorizationStates[authorizer][nonce]) revert AuthorizationAlreadyUsed(authorizer, nonce);
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireSignedBy(authorizer, structHash, v, r, s);
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    // ---------------------------------------------------------------- internals

    function _useAuthorization(
        bytes32 typehash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        // Same strict bounds as USDC: valid only strictly inside (validAfter, validBefore).
        if (block.timestamp <= validAfter) revert AuthorizationNotYetValid(validAfter);
        if (block.timestamp >= validBefore) revert AuthorizationExpired(validBefore);
        if (_authorizationStates[from][nonce]) revert AuthorizationAlreadyUsed(from, nonce);
        bytes32 structHash = keccak256(abi.encode(typehash, from, to, value, validAfter, validBefore, nonce));
        _requireSignedBy(from, structHash, v, r, s);
        _authorizationStates[from][nonce] = true;
        emit AuthorizationUsed(from, nonce);
    }

    /// @dev Reverts unless (v, r, s) is a canonical signature by `signer` over the EIP-712 digest
    ///      of `structHash`. ecrecover alone accepts high-s twins and returns 0 on garbage.
    function _requireSignedBy(address signer, bytes32 structHash, uint8 v, bytes32 r, bytes32 s) private view {
        if (uint256(s) > SECP256K1_HALF_N) revert InvalidSignature();
        if (v != 27 && v != 28) revert InvalidSignature();
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        address recovered = ecrecover(digest, v, r, s);
        if (recovered == address(0) || recovered != signer) revert InvalidSignature();
    }

    function _buildDomainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(EIP712_DOMAIN_TYPEHASH, _hashedName, keccak256(bytes(version)), block.chainid, address(this))
        );
    }

    function _transfer(address from, address to, uint256 value) private {
        if (to == address(0)) revert InvalidAddress(to);
        uint256 balance = balanceOf[from];
        if (balance < value) revert InsufficientBalance(from, balance, value);
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function _approve(address owner, address spender, uint256 value) private {
        if (spender == address(0)) revert InvalidAddress(spender);
        allowance[owner][spender] = value;
        emit Approval(owner, spender, value);
    }
}
