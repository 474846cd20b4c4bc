// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IPaymentCallbackAdapter} from "../interfaces/IPaymentCallbackAdapter.sol";

/// @title TestCallbackAdapter
/// @notice A TEST adapter whose behaviour is switchable by anyone, so tests can make a callback
///         succeed, return false, revert, return nothing, or re-enter its caller (also while posing
///         as a token, through its fallback). It can also act
///         as a contract executor (`execute`), which is how the settlement contract's reentrancy
///         guard is exercised: the adapter is the executor and re-enters from inside its callback.
/// @dev Never deploy it outside tests: it has no access control at all.
contract TestCallbackAdapter is IPaymentCallbackAdapter {
    enum Mode {
        Succeed,
        ReturnFalse,
        Revert,
        ReturnNothing,
        Reenter
    }

    Mode public mode;
    address public reenterTarget;
    bytes public reenterData;

    uint256 public calls;
    address public lastPayer;
    address public lastToken;
    uint256 public lastAmount;
    bytes public lastCalldata;

    event Called(address indexed payer, address indexed token, uint256 amount, bytes calldata_);

    error Boom(uint256 code);

    function setMode(Mode mode_) external {
        mode = mode_;
    }

    function setReentry(address target, bytes calldata data) external {
        reenterTarget = target;
        reenterData = data;
    }

    /// @notice Calls `target` with `data` as this contract, bubbling a revert unchanged.
    function execute(address target, bytes calldata data) external {
        (bool ok, bytes memory ret) = target.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
    }

    /// @notice Lets this contract pose as a token to a contract under test: it claims a large
    ///         balance, and any other call (e.g. `transfer`) runs the re-entry in Reenter mode.
    function balanceOf(address) external pure returns (uint256) {
        return 1e30;
    }

    fallback() external {
        if (mode == Mode.Reenter) _reenter();
    }

    function onPaymentCallback(address payer, address token, uint256 amount, bytes calldata calldata_)
        external
        returns (bool)
    {
        Mode m = mode;
        if (m == Mode.Revert) revert Boom(42);
        if (m == Mode.Reenter) _reenter();
        calls += 1;
        lastPayer = payer;
        lastToken = token;
        lastAmount = amount;
        lastCalldata = calldata_;
        emit Called(payer, token, amount, calldata_);
        if (m == Mode.ReturnNothing) {
            assembly {
                return(0, 0)
            }
        }
        return m != Mode.ReturnFalse;
    }

    function _reenter() private {
        (bool ok, bytes memory ret) = reenterTarget.call(reenterData);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
    }

    function eip712Domain()
        external
        view
        returns (bytes1, string memory, string memory, uint256, address, bytes32, uint256[] memory)
    {
        return (hex"0f", "Tollgate Test Adapter", "1", block.chainid, address(this), bytes32(0), new uint256[](0));
    }
}
