import { getAddress, isAddress } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { FamilyAddresses } from '../chain/family.js';
import { badInput } from '../errors.js';

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * EVM addresses: a secp256k1 key's address (the last 20 bytes of the keccak hash of its public key),
 * written checksummed (EIP-55). One key serves every EVM network, so one address does.
 */
export const evmAddresses: FamilyAddresses = {
  generate() {
    const privateKey = generatePrivateKey();
    return { address: privateKeyToAddress(privateKey), secret: Buffer.from(privateKey.slice(2), 'hex') };
  },
  // A mixed-case address must carry a valid checksum (a typo is caught); an all-lower or all-upper one has none to check.
  isValid: (address) => HEX_ADDRESS.test(address) && isAddress(address, { strict: true }),
};

/** An address a partner gave, checksummed; anything else is a 400 naming `field`. */
export function checkEvmAddress(value: unknown, field: string): `0x${string}` {
  if (typeof value !== 'string' || !evmAddresses.isValid(value))
    throw badInput(
      field,
      `${field} must be a 0x-prefixed EVM address of 40 hex digits (EIP-55 checksum when mixed-case).`,
    );
  return getAddress(value);
}
