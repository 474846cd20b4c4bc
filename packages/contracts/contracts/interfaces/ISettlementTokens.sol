// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

// The slices of token and adapter interfaces TollgateSettlement calls: ERC-20 balance, EIP-3009
// receiveWithAuthorization, EIP-2612 permit, and EIP-5267 eip712Domain (read from adapters to
// verify the payer's calldata signature under the adapter's own domain).

interface ISettlementToken {
    function balanceOf(address account) external view returns (uint256);
}

interface IReceiveWithAuthorization {
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
    ) external;
}

interface IPermit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

interface IEip5267 {
    function eip712Domain()
        external
        view
        returns (bytes1, string memory, string memory, uint256, address, bytes32, uint256[] memory);
}
