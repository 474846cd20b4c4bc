// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title TestTetherToken
/// @notice A USDT-shaped ERC-20 for local chains and tests: 6 decimals, NO EIP-2612 permit and NO
///         EIP-3009 authorizations, and — like USDT on Ethereum — `transfer`, `transferFrom` and
///         `approve` return nothing. Code that only works with well-behaved ERC-20s fails here
///         first, not in production.
/// @dev THIS IS A TEST TOKEN. `mint` is callable by anyone.
contract TestTetherToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error InvalidAddress(address account);
    error InsufficientBalance(address account, uint256 balance, uint256 needed);
    error InsufficientAllowance(address owner, address spender, uint256 allowance, uint256 needed);

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    /// @notice Mints `amount` to `to`. Callable by ANYONE: this is a test token.
    function mint(address to, uint256 amount) external {
        if (to == address(0)) revert InvalidAddress(to);
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 value) external {
        _transfer(msg.sender, to, value);
    }

    function approve(address spender, uint256 value) external {
        if (spender == address(0)) revert InvalidAddress(spender);
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    /// @dev An allowance of type(uint256).max is treated as infinite and never decremented.
    function transferFrom(address from, address to, uint256 value) external {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            if (allowed < value) revert InsufficientAllowance(from, msg.sender, allowed, value);
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
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
}
