import type { Principal } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { formatUnits } from '../money/decimal.js';

/**
 * One portfolio across everything a user holds: the NGN wallet, and each chain family's networks,
 * valued in USD and NGN. Families supply their parts (portfolio sources, given by the wiring), so
 * this module reads no family. Values are worked in whole cents and kobo, so every part's value
 * is the sum of its holdings' and the totals the sum of the parts', to the unit.
 */

/** A USD price of one unit of an asset, where it came from and when it was read. */
export interface UsdPrice {
  usd: number;
  source: string;
  asOf: Date;
}

/** What a source reports of one asset, before valuation. */
export interface RawHolding {
  symbol: string;
  /** The token's address (an ERC-20 contract, a Solana mint); null for a native coin or naira. */
  token: string | null;
  amountRaw: bigint;
  decimals: number;
  /** USD cents of the holding when the source values it itself (naira, at the rate), else from `price`. */
  usdCents?: bigint;
  /** NGN kobo of the holding when the source values it itself (naira). */
  ngnKobo?: bigint;
  price: UsdPrice | null;
}

export interface RawPart {
  family: string;
  network: string | null;
  address: string | null;
  /** Whether the user has used this part: a network never used is listed as empty, not created. */
  touched: boolean;
  holdings: RawHolding[];
}

/** A family's (or the wallet's) parts of a user's portfolio. */
export interface PortfolioSource {
  parts(principal: Principal, rate: NgnRate): Promise<RawPart[]>;
}

/** Naira per US dollar, where it came from and when. */
export interface NgnRate {
  ngnPerUsd: number;
  source: string;
  asOf: Date;
}

export interface HoldingView {
  symbol: string;
  token: string | null;
  amount: string;
  amountRaw: bigint;
  decimals: number;
  usdValue: number;
  ngnValue: number;
  /** Whether a price was known: an unpriced holding counts 0 in the totals. */
  priced: boolean;
  usdPrice: number | null;
  priceSource: string | null;
  priceAsOf: Date | null;
  priceAgeSeconds: number | null;
}

export interface PartView {
  family: string;
  network: string | null;
  address: string | null;
  touched: boolean;
  holdings: HoldingView[];
  usdValue: number;
  ngnValue: number;
}

export interface PortfolioView {
  parts: PartView[];
  usdValue: number;
  ngnValue: number;
  ngnPerUsd: number;
  rateSource: string;
  rateAsOf: Date;
  valuedAt: Date;
}

const SCALE = 1_000_000n;
/** A price or a rate as an integer over SCALE, so a holding is valued in integers. */
const scaled = (value: number) => BigInt(Math.round(value * Number(SCALE)));
const roundDiv = (a: bigint, b: bigint) => (a * 2n + b) / (2n * b);
const fromMinor = (minor: bigint) => Number(formatUnits(minor, 2));

export class Portfolio {
  constructor(
    private readonly clock: Clock,
    private readonly rate: () => NgnRate,
    private readonly sources: readonly PortfolioSource[],
  ) {}

  async of(principal: Principal): Promise<PortfolioView> {
    const rate = this.rate();
    const now = this.clock.now();
    const raw = (await Promise.all(this.sources.map((source) => source.parts(principal, rate)))).flat();
    const rateScaled = scaled(rate.ngnPerUsd);
    const parts = raw.map((part) => {
      let usd = 0n;
      let ngn = 0n;
      const holdings = part.holdings.map((h): HoldingView & { cents: bigint; kobo: bigint } => {
        const cents =
          h.usdCents ??
          (h.price ? roundDiv(h.amountRaw * scaled(h.price.usd) * 100n, SCALE * 10n ** BigInt(h.decimals)) : 0n);
        const kobo = h.ngnKobo ?? roundDiv(cents * rateScaled, SCALE);
        usd += cents;
        ngn += kobo;
        return {
          symbol: h.symbol,
          token: h.token,
          amount: formatUnits(h.amountRaw, h.decimals),
          amountRaw: h.amountRaw,
          decimals: h.decimals,
          usdValue: fromMinor(cents),
          ngnValue: fromMinor(kobo),
          priced: h.price !== null || h.usdCents !== undefined,
          usdPrice: h.price?.usd ?? null,
          priceSource: h.price?.source ?? null,
          priceAsOf: h.price?.asOf ?? null,
          priceAgeSeconds: h.price ? Math.max(0, Math.round((now.getTime() - h.price.asOf.getTime()) / 1000)) : null,
          cents,
          kobo,
        };
      });
      return {
        view: {
          family: part.family,
          network: part.network,
          address: part.address,
          touched: part.touched,
          holdings: holdings.map(({ cents: _c, kobo: _k, ...h }) => h),
          usdValue: fromMinor(usd),
          ngnValue: fromMinor(ngn),
        },
        usd,
        ngn,
      };
    });
    return {
      parts: parts.map((p) => p.view),
      usdValue: fromMinor(parts.reduce((sum, p) => sum + p.usd, 0n)),
      ngnValue: fromMinor(parts.reduce((sum, p) => sum + p.ngn, 0n)),
      ngnPerUsd: rate.ngnPerUsd,
      rateSource: rate.source,
      rateAsOf: rate.asOf,
      valuedAt: now,
    };
  }
}

/** The NGN wallet as a part: its balance (available and held) in kobo, valued at the rate in USD. */
export function ngnWalletSource(balance: (principal: Principal) => Promise<{ total: bigint }>): PortfolioSource {
  return {
    async parts(principal, rate) {
      const { total } = await balance(principal);
      const rateScaled = scaled(rate.ngnPerUsd);
      return [
        {
          family: 'ngn',
          network: null,
          address: null,
          touched: true,
          holdings: [
            {
              symbol: 'NGN',
              token: null,
              amountRaw: total,
              decimals: 2,
              ngnKobo: total,
              usdCents: roundDiv(total * SCALE, rateScaled),
              price: { usd: 1 / rate.ngnPerUsd, source: rate.source, asOf: rate.asOf },
            },
          ],
        },
      ];
    },
  };
}
