// SPDX-License-Identifier: GPL-3.0
// Copyright (C) 2015, 2016, 2017 Dapphub
//
// The canonical WETH9 (mainnet 0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2), with the edits solc 0.8
// needs and nothing else:
// - pragma ^0.4.18 → 0.8.30; events raised with `emit`;
// - the fallback `function() public payable` → `receive() external payable`;
// - `msg.sender.transfer` → `payable(msg.sender).transfer`; `this.balance` → `address(this).balance`;
// - `uint(-1)` → `type(uint).max`;
// - name and symbol set by the constructor instead of inline, so one bytecode serves as WETH, WPOL
//   and WBNB (WPOL's and WBNB's mainnet contracts are WETH9 renamed).
// 0.8's checked arithmetic only adds reverts where 0.4 would have wrapped, which every subtraction
// here already guards with a `require`.
pragma solidity 0.8.30;

contract WETH9 {
    string public name;
    string public symbol;
    uint8  public decimals = 18;

    event  Approval(address indexed src, address indexed guy, uint wad);
    event  Transfer(address indexed src, address indexed dst, uint wad);
    event  Deposit(address indexed dst, uint wad);
    event  Withdrawal(address indexed src, uint wad);

    mapping (address => uint)                       public  balanceOf;
    mapping (address => mapping (address => uint))  public  allowance;

    constructor(string memory name_, string memory symbol_) {
        name = name_;
        symbol = symbol_;
    }

    receive() external payable {
        deposit();
    }
    function deposit() public payable {
        balanceOf[msg.sender] += msg.value;
        emit Deposit(msg.sender, msg.value);
    }
    function withdraw(uint wad) public {
        require(balanceOf[msg.sender] >= wad);
        balanceOf[msg.sender] -= wad;
        payable(msg.sender).transfer(wad);
        emit Withdrawal(msg.sender, wad);
    }

    function totalSupply() public view returns (uint) {
        return address(this).balance;
    }

    function approve(address guy, uint wad) public returns (bool) {
        allowance[msg.sender][guy] = wad;
        emit Approval(msg.sender, guy, wad);
        return true;
    }

    function transfer(address dst, uint wad) public returns (bool) {
        return transferFrom(msg.sender, dst, wad);
    }

    function transferFrom(address src, address dst, uint wad)
        public
        returns (bool)
    {
        require(balanceOf[src] >= wad);

        if (src != msg.sender && allowance[src][msg.sender] != type(uint).max) {
            require(allowance[src][msg.sender] >= wad);
            allowance[src][msg.sender] -= wad;
        }

        balanceOf[src] -= wad;
        balanceOf[dst] += wad;

        emit Transfer(src, dst, wad);

        return true;
    }
}
