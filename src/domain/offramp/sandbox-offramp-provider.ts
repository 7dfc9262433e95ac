import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { badInput } from '../errors.js';
import { formatUnits, parseUnits } from '../money/decimal.js';
import type { FiatCurrency, OfframpNetwork, OfframpToken } from './catalogue.js';
import type {
  OfframpAsset,
  OfframpProvider,
  PayoutInstitution,
  ProviderOrder,
  ProviderOrderRequest,
} from './offramp-provider.js';

/**
 * The sandbox's simulated offramp provider. It serves what Paycrest serves among the seed's values
 * (so an integration that works here asks nothing of production it cannot give), quotes from a
 * fixed rates table less a spread, and creates orders whose lifecycle the gateway's jobs then walk
 * (see offramp-jobs.ts). Magic values are in SANDBOX_OFFRAMP.
 */
export const SANDBOX_OFFRAMP = {
  /** Fiat per US dollar before the spread. */
  marketRates: { NGN: '1650.00', GHS: '15.40', KES: '129.30' } as Partial<Record<FiatCurrency, string>>,
  /** Basis points taken off the market rate. */
  spreadBps: 50n,
  /** The sender's fee in basis points of the amount. */
  senderFeeBps: 50n,
  /** Minutes an order waits for its deposit before it expires. */
  validityMinutes: 30,
  /** An account number whose payout fails after the deposit: the order ends `refunded`. */
  failingPayoutAccount: '0000000000',
  /** An account number that verification does not find (400). */
  unknownAccount: '1111111111',
};

const STABLE_NETWORKS: OfframpNetwork[] = [
  'ethereum',
  'base',
  'arbitrum-one',
  'polygon',
  'bnb-smart-chain',
  'lisk',
  'starknet',
];
const CNGN_NETWORKS: OfframpNetwork[] = ['ethereum', 'base', 'polygon', 'bnb-smart-chain'];
/** Network fee per order, in US dollars. */
const NETWORK_FEE_USD: Partial<Record<OfframpNetwork, string>> = { ethereum: '1.50' };
const DEFAULT_NETWORK_FEE_USD = '0.05';

const INSTITUTIONS: Partial<Record<FiatCurrency, PayoutInstitution[]>> = {
  NGN: [
    { code: 'ABNGNGLA', name: 'Access Bank', type: 'bank' },
    { code: 'FBNINGLA', name: 'First Bank of Nigeria', type: 'bank' },
    { code: 'GTBINGLA', name: 'Guaranty Trust Bank', type: 'bank' },
    { code: 'KUDANGPC', name: 'Kuda Microfinance Bank', type: 'bank' },
    { code: 'OPAYNGPC', name: 'OPay', type: 'bank' },
    { code: 'ZEIBNGLA', name: 'Zenith Bank', type: 'bank' },
  ],
  KES: [
    { code: 'KCBLKENX', name: 'KCB Bank', type: 'bank' },
    { code: 'SAFAKEPC', name: 'M-Pesa', type: 'mobile_money' },
  ],
  GHS: [
    { code: 'GHCBGHAC', name: 'GCB Bank', type: 'bank' },
    { code: 'MTNMGHPC', name: 'MTN Mobile Money', type: 'mobile_money' },
  ],
};

const decimalsOf = (token: OfframpToken, network: OfframpNetwork) =>
  network === 'bnb-smart-chain' && token !== 'CNGN' ? 18 : 6;
/** US dollars per token. */
const usdPrice = (token: OfframpToken) => (token === 'CNGN' ? null : '1');

/** A stable, obviously-fake contract address per pair (the sandbox has no chain behind it). */
function sandboxContract(token: OfframpToken, network: OfframpNetwork): string {
  const hash = createHash('sha256').update(`sandbox-offramp:${token}:${network}`).digest('hex');
  return `0x${network === 'starknet' ? hash : hash.slice(0, 40)}`;
}

export class SandboxOfframpProvider implements OfframpProvider {
  readonly name = 'sandbox';
  constructor(private readonly clock: Clock) {}

  simulatedDepositHash(orderId: string): string {
    return `0x${createHash('sha256').update(`deposit:${orderId}`).digest('hex')}`;
  }

  async assets(): Promise<OfframpAsset[]> {
    const pairs: Array<[OfframpToken, OfframpNetwork]> = [
      ...STABLE_NETWORKS.flatMap((network) =>
        (['USDT', 'USDC'] as const).map((token): [OfframpToken, OfframpNetwork] => [token, network]),
      ),
      ...CNGN_NETWORKS.map((network): [OfframpToken, OfframpNetwork] => ['CNGN', network]),
    ];
    return pairs.map(([token, network]) => ({
      token,
      network,
      contractAddress: sandboxContract(token, network),
      decimals: decimalsOf(token, network),
    }));
  }

  async rate({
    token,
    network,
    amount,
    fiat,
  }: {
    token: OfframpToken;
    network: OfframpNetwork;
    amount: string;
    fiat: FiatCurrency;
  }): Promise<string> {
    const served = token === 'CNGN' ? CNGN_NETWORKS : STABLE_NETWORKS;
    if (!served.includes(network)) {
      throw badInput('network', `${token} is not served on ${network}. Networks for ${token}: ${served.join(', ')}.`);
    }
    if (token === 'CNGN' && fiat !== 'NGN') throw badInput('fiat', 'CNGN can only be converted to NGN.');
    const market = SANDBOX_OFFRAMP.marketRates[fiat];
    if (!market)
      throw badInput(
        'fiat',
        `fiat ${fiat} has no payouts here. Supported: ${Object.keys(SANDBOX_OFFRAMP.marketRates).join(', ')}.`,
      );
    const units = parseUnits(amount, decimalsOf(token, network), 'amount');
    const minimum = parseUnits(token === 'CNGN' ? '500' : '0.5', decimalsOf(token, network), 'amount');
    if (units < minimum)
      throw badInput('amount', `amount must be at least ${formatUnits(minimum, decimalsOf(token, network))} ${token}.`);
    // Fiat per token in cents: cNGN is one naira; dollar tokens are the fiat's dollar rate.
    const perTokenCents = token === 'CNGN' ? 100n : parseUnits(market, 2, 'rate');
    return formatUnits((perTokenCents * (10_000n - SANDBOX_OFFRAMP.spreadBps)) / 10_000n, 2);
  }

  async institutions(fiat: FiatCurrency): Promise<PayoutInstitution[]> {
    const list = INSTITUTIONS[fiat];
    if (!list)
      throw badInput('fiat', `fiat ${fiat} has no payouts here. Supported: ${Object.keys(INSTITUTIONS).join(', ')}.`);
    return list;
  }

  async verifyAccount({
    institution,
    accountIdentifier,
  }: {
    institution: string;
    accountIdentifier: string;
  }): Promise<string | null> {
    const found = Object.values(INSTITUTIONS)
      .flat()
      .find((i) => i!.code === institution);
    if (!found)
      throw badInput(
        'institution',
        `Unknown institution code ${JSON.stringify(institution)}; list them with the supported payout banks.`,
      );
    if (accountIdentifier === SANDBOX_OFFRAMP.unknownAccount)
      throw badInput('accountNumber', `No account ${accountIdentifier} at ${found.name}.`);
    // Mobile money confirms the number without a name, as Paycrest answers "OK" for M-Pesa.
    return found.type === 'mobile_money' ? null : `SANDBOX ACCOUNT ${accountIdentifier.slice(-4)}`;
  }

  async createOrder(order: ProviderOrderRequest): Promise<ProviderOrder> {
    const decimals = decimalsOf(order.token, order.network);
    const amount = parseUnits(order.amount, decimals, 'amount');
    const senderFee = (amount * SANDBOX_OFFRAMP.senderFeeBps) / 10_000n;
    const feeUsd = parseUnits(NETWORK_FEE_USD[order.network] ?? DEFAULT_NETWORK_FEE_USD, decimals, 'fee');
    // cNGN pays the network fee in naira at the sandbox's dollar rate.
    const transactionFee = usdPrice(order.token)
      ? feeUsd
      : (feeUsd * parseUnits(SANDBOX_OFFRAMP.marketRates.NGN!, 2, 'rate')) / 100n;
    const address = randomBytes(order.network === 'starknet' ? 32 : 20).toString('hex');
    return {
      providerOrderId: `sbx_${randomBytes(12).toString('hex')}`,
      receiveAddress: `0x${address}`,
      validUntil: new Date(this.clock.now().getTime() + SANDBOX_OFFRAMP.validityMinutes * 60_000),
      senderFee: formatUnits(senderFee, decimals),
      transactionFee: formatUnits(transactionFee, decimals),
    };
  }
}
