import { Keypair } from '@solana/web3.js';
import { type GraphQLInterfaceType, isInterfaceType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ChainFamilies } from '../../src/domain/chain/registry.js';
import { solanaFamily } from '../../src/domain/solana/solana-family.js';
import { chainResolvers } from '../../src/graphql/resolvers/chain.js';
import { buildSchema } from '../../src/graphql/schema.js';

/** The chain-neutral interfaces, implemented by Solana's types and resolved by the family of the address. */
describe('chain interfaces in the graph', () => {
  const schema = buildSchema();
  const implementations = {
    ChainWallet: 'SolanaWallet',
    ChainToken: 'SolanaToken',
    ChainTransfer: 'SolanaTransfer',
    ChainSwapQuote: 'SwapQuote',
  };

  it('each is an interface that the Solana type implements, with the fields every family shares', () => {
    for (const [name, solanaType] of Object.entries(implementations)) {
      const iface = schema.getType(name);
      expect(isInterfaceType(iface), name).toBe(true);
      expect(schema.getPossibleTypes(iface as GraphQLInterfaceType).map((t) => t.name)).toEqual([solanaType]);
      const type = schema.getType(solanaType);
      expect(isObjectType(type) && type.getInterfaces().map((i) => i.name)).toContain(name);
    }
    const transfer = schema.getType('ChainTransfer') as GraphQLInterfaceType;
    expect(Object.keys(transfer.getFields())).toEqual(
      expect.arrayContaining(['id', 'network', 'from', 'to', 'amount', 'amountRaw', 'txUrl', 'createdAt']),
    );
    // Solana's words stay on Solana's types.
    expect(Object.keys(transfer.getFields())).not.toContain('signature');
    expect(Object.keys(transfer.getFields())).not.toContain('mint');
  });

  it("resolve to Solana's types for Solana addresses, and to none for an address no family reads", () => {
    const services = { chainFamilies: new ChainFamilies([solanaFamily({} as never, () => undefined)]) };
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
    expect(resolve('ChainWallet', { address: evm })).toBeNull();
    expect(resolve('ChainTransfer', { from: evm })).toBeNull();
  });
});
