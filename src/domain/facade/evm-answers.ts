import { type Static, Type } from '@sinclair/typebox';
import type { EvmBalanceView, EvmNetworkView, EvmPortfolioView } from '../evm/evm-reads.js';
import type { EvmSendView } from '../evm/evm-send-view.js';
import { EVM_NETWORK_SPECS, EVM_NETWORKS, type EvmNetwork } from '../evm/networks.js';
import { parseUnits } from '../money/decimal.js';
import { type AnswerOf, answerShape, Nullable, Timestamp } from '../upstream/answer-shape.js';
import type { JsonAnswer } from './upstream-json.js';

/**
 * The EVM wallet's answers as this gateway's REST writes them (docs/evm.md: the spec names the
 * operations but shows no body), each in the envelope's `data`. Amounts are decimal strings in
 * token units beside their raw integer; an amount that is not its raw integer at its decimals, a
 * network other than the one asked, or a network this gateway does not know is an answer not in
 * shape, as is any field missing or mistyped.
 */
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' });
const Network = Type.Union(EVM_NETWORKS.map((id) => Type.Literal(id)));
/** Decimal places of an ERC-20 (a uint8) or a native coin. */
const Decimals = Type.Integer({ minimum: 0, maximum: 255 });
/** A uint256 in base units, as an integer string. */
const Raw = Type.String({ pattern: '^\\d{1,78}$' });
const TokenUnits = Type.String({ pattern: '^\\d{1,78}(\\.\\d{1,255})?$' });
const Name = Type.String({ minLength: 1, maxLength: 200 });

const Balance = Type.Object({
  network: Network,
  address: Address,
  symbol: Name,
  token: Nullable(Address),
  decimals: Decimals,
  amount: TokenUnits,
  amountRaw: Raw,
});

/** `GET /api/v1/evm/address`. */
export const EvmAddressAnswer = answerShape(Type.Object({ data: Type.Object({ address: Address }) }));

/** `GET /api/v1/evm/networks`. */
export const EvmNetworksAnswer = answerShape(
  Type.Object({
    data: Type.Array(
      Type.Object({
        id: Network,
        chainId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
        name: Name,
        native: Type.Object({ symbol: Name, name: Name, decimals: Decimals }),
        explorer: Type.String({ minLength: 1, maxLength: 2048 }),
        dataFee: Type.Boolean(),
        tokens: Type.Array(
          Type.Object({ address: Address, symbol: Name, name: Name, decimals: Decimals, wrapsNative: Type.Boolean() }),
          { maxItems: 256 },
        ),
      }),
      { maxItems: 256 },
    ),
  }),
);

/** `GET /api/v1/evm/{network}/balance` and `…/tokens/{token}/balance`. */
export const EvmBalanceAnswer = answerShape(Type.Object({ data: Balance }));

/** `GET /api/v1/evm/{network}/portfolio`. */
export const EvmPortfolioAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      address: Address,
      network: Network,
      chainId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      native: Balance,
      tokens: Type.Array(Balance, { maxItems: 256 }),
    }),
  }),
);

/** `POST /api/v1/evm/{network}/send-native` and `…/send-token`: the stored transfer. */
export const EvmTransferAnswer = answerShape(
  Type.Object({
    data: Type.Object({
      id: Type.String({ minLength: 1, maxLength: 64 }),
      hash: Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' }),
      status: Type.Union([
        Type.Literal('pending'),
        Type.Literal('confirmed'),
        Type.Literal('failed'),
        Type.Literal('replaced'),
      ]),
      network: Network,
      chainId: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
      kind: Type.Union([Type.Literal('native'), Type.Literal('token')]),
      from: Address,
      to: Address,
      asset: Name,
      token: Nullable(Address),
      amount: TokenUnits,
      amountRaw: Raw,
      nonce: Raw,
      maxFee: TokenUnits,
      maxFeeRaw: Raw,
      replaces: Nullable(Type.String({ minLength: 1, maxLength: 64 })),
      error: Nullable(Type.String({ maxLength: 2048 })),
      txUrl: Type.String({ minLength: 1, maxLength: 2048 }),
      createdAt: Timestamp,
    }),
  }),
);

type BalanceData = Static<typeof Balance>;

/** Whether `amount` is exactly `raw` at `decimals` (written with any number of trailing zeros). */
function sameAmount(amount: string, raw: string, decimals: number): boolean {
  try {
    return parseUnits(amount, decimals, 'amount') === BigInt(raw);
  } catch {
    return false;
  }
}

/** A balance of the wallet on `network`; `at` is its pointer in the answer. */
export function balanceOf(
  answer: JsonAnswer<unknown>,
  data: BalanceData,
  network: EvmNetwork,
  at: string,
): EvmBalanceView {
  if (data.network !== network) throw answer.unreadable(`${at}/network`);
  if (!sameAmount(data.amount, data.amountRaw, data.decimals)) throw answer.unreadable(`${at}/amount`);
  return { ...data, network, amountRaw: BigInt(data.amountRaw) };
}

/** The portfolio of the wallet on `network`: each balance of that network and that address. */
export function portfolioOf(
  answer: JsonAnswer<AnswerOf<typeof EvmPortfolioAnswer>>,
  network: EvmNetwork,
): EvmPortfolioView {
  const data = answer.value.data;
  if (data.network !== network) throw answer.unreadable('/data/network');
  const balances = [data.native, ...data.tokens];
  const stranger = balances.findIndex((balance) => balance.address !== data.address);
  if (stranger >= 0)
    throw answer.unreadable(stranger === 0 ? '/data/native/address' : `/data/tokens/${stranger - 1}/address`);
  return {
    address: data.address,
    network,
    chainId: data.chainId,
    native: balanceOf(answer, data.native, network, '/data/native'),
    tokens: data.tokens.map((token, i) => balanceOf(answer, token, network, `/data/tokens/${i}`)),
  };
}

/** The networks as listed (each id one this gateway knows: the shape holds it to them). */
export function networksOf(answer: JsonAnswer<AnswerOf<typeof EvmNetworksAnswer>>): EvmNetworkView[] {
  return answer.value.data.map((network) => ({ ...network, id: network.id as EvmNetwork }));
}

/** The transfer a send stored: of the kind and on the network sent, its amounts exact. */
export function transferOf(
  answer: JsonAnswer<AnswerOf<typeof EvmTransferAnswer>>,
  sent: { network: EvmNetwork; kind: 'native' | 'token' },
): EvmSendView {
  const data = answer.value.data;
  if (data.network !== sent.network) throw answer.unreadable('/data/network');
  if (data.kind !== sent.kind) throw answer.unreadable('/data/kind');
  if ((data.token === null) !== (sent.kind === 'native')) throw answer.unreadable('/data/token');
  // Fees, and a native amount, are in the native coin: its decimals are the network's.
  const native = EVM_NETWORK_SPECS[sent.network].native.decimals;
  if (!sameAmount(data.maxFee, data.maxFeeRaw, native)) throw answer.unreadable('/data/maxFee');
  if (sent.kind === 'native' && !sameAmount(data.amount, data.amountRaw, native))
    throw answer.unreadable('/data/amount');
  return {
    ...data,
    network: sent.network,
    amountRaw: BigInt(data.amountRaw),
    nonce: BigInt(data.nonce),
    maxFeeRaw: BigInt(data.maxFeeRaw),
    createdAt: new Date(data.createdAt),
  };
}
