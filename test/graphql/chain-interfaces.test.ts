import { Keypair } from '@solana/web3.js';
import { type GraphQLInterfaceType, isInterfaceType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ChainFamilies } from '../../src/domain/chain/registry.js';
import { EvmChains } from '../../src/domain/evm/evm-chains.js';
import { evmFamily } from '../../src/domain/evm/evm-family.js';
import { solanaFamily } from '../../src/domain/solana/solana-family.js';
import { chainResolvers } from '../../src/graphql/resolvers/chain.js';
import { buildSchema } from '../../src/graphql/schema.js';

/** The chain-neutral interfaces, implemented by each family's types and resolved by the family of the address. */
describe('chain interfaces in the graph', () => {
  const schema = buildSchema();
  const implementations = {
    ChainWallet: ['EvmWallet', 'SolanaWallet'],
    ChainToken: ['EvmToken', 'SolanaToken'],
    ChainTransfer: ['EvmTransfer', 'SolanaTransfer'],
    ChainSwapQuote: ['EvmSwapQuote', 'SwapQuote'],
  };

  it("each is an interface that every family's type implements, with the fields every family shares", () => {
    for (const [name, familyTypes] of Object.entries(implementations)) {
      const iface = schema.getType(name);
      expect(isInterfaceType(iface), name).toBe(true);
      expect(
        schema
          .getPossibleTypes(iface as GraphQLInterfaceType)
          .map((t) => t.name)
          .sort(),
      ).toEqual(familyTypes);
      for (const familyType of familyTypes) {
        const type = schema.getType(familyType);
        expect(isObjectType(type) && type.getInterfaces().map((i) => i.name)).toContain(name);
      }
    }
    const transfer = schema.getType('ChainTransfer') as GraphQLInterfaceType;
    expect(Object.keys(transfer.getFields())).toEqual(
      expect.arrayContaining(['id', 'network', 'from', 'to', 'amount', 'amountRaw', 'txUrl', 'createdAt']),
    );
    // Solana's words stay on Solana's types.
    expect(Object.keys(transfer.getFields())).not.toContain('signature');
    expect(Object.keys(transfer.getFields())).not.toContain('mint');
  });

  it("resolve to the type of the address's family, and to none for an address no family reads", () => {
    const services = {
      chainFamilies: new ChainFamilies([
        solanaFamily({} as never, () => undefined),
        evmFamily(new EvmChains(undefined)),
      ]),
    };
    const context = { services } as never;
    const info = {} as never;
    const address = Keypair.generate().publicKey.toBase58();
    const evm = '0x52908400098527886E0F7030069857D2E4169EE7';
    const resolve = (type: keyof typeof implementations, value: unknown) =>
      (chainResolvers[type] as { __resolveType: (v: never, c: never, i: never) => unknown }).__resolveType(
        value as never,
        context,
        info,
      );
    expect(resolve('ChainWallet', { address })).toBe('SolanaWallet');
    expect(resolve('ChainToken', { address, symbol: 'X', name: 'X', decimals: 6 })).toBe('SolanaToken');
    expect(resolve('ChainTransfer', { from: address })).toBe('SolanaTransfer');
    expect(resolve('ChainSwapQuote', { fromToken: { address } })).toBe('SwapQuote');
    expect(resolve('ChainWallet', { address: evm })).toBe('EvmWallet');
    expect(resolve('ChainToken', { address: evm, symbol: 'USDC', name: 'USD Coin', decimals: 6 })).toBe('EvmToken');
    expect(resolve('ChainTransfer', { from: evm })).toBe('EvmTransfer');
    expect(resolve('ChainWallet', { address: 'not-an-address' })).toBeNull();
    expect(resolve('ChainTransfer', { from: '0x1234' })).toBeNull();
  });
});
