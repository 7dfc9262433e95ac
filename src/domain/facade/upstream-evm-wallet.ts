import { badInput } from '../errors.js';
import type { EvmBalanceView, EvmNetworkView, EvmPortfolioView } from '../evm/evm-reads.js';
import type { EvmSendView } from '../evm/evm-send-view.js';
import type { EvmSendInput } from '../evm/evm-transfers.js';
import type { EvmWalletDomain } from '../evm/evm-wallet-domain.js';
import { checkEvmNetwork, type EvmNetwork } from '../evm/networks.js';
import type { AnswerShape } from '../upstream/answer-shape.js';
import type { Caller } from '../users/user-directory.js';
import {
  balanceOf,
  EvmAddressAnswer,
  EvmBalanceAnswer,
  EvmNetworksAnswer,
  EvmPortfolioAnswer,
  EvmTransferAnswer,
  networksOf,
  portfolioOf,
  transferOf,
} from './evm-answers.js';
import type { FacadeKeys } from './facade-keys.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf } from './upstream-json.js';
import { type NamedOperation, placedRoute, type RouteMap } from './upstream-routes.js';

/** A token as this gateway's REST paths and bodies take it: its symbol, letters only. */
const TOKEN_SYMBOL = /^[A-Za-z]{2,10}$/;

/**
 * The caller's EVM wallet in a facade: each operation asked of the upstream where the route map
 * places it (`gateway`: this gateway's own REST paths, docs/evm.md), with the caller's credential.
 * The network is checked here, as it picks the path, and so is the token's form; which tokens a
 * network has is the upstream's answer. A send is sent once with the caller's Idempotency-Key,
 * under the facade's record of it (facade-keys.ts).
 */
export class UpstreamEvmWallet implements EvmWalletDomain {
  constructor(
    private readonly upstream: RestV1Upstream,
    private readonly routes: RouteMap,
    /** The facade's record per Idempotency-Key; without it a send is simply sent once. */
    private readonly keys?: FacadeKeys,
  ) {}

  async address(caller: Caller): Promise<{ address: string }> {
    const answer = await this.get(caller, 'evm.address', 'evmWallet', {}, EvmAddressAnswer);
    return { address: answer.value.data.address };
  }

  async networks(caller: Caller): Promise<EvmNetworkView[]> {
    return networksOf(await this.get(caller, 'evm.networks', 'evmNetworks', {}, EvmNetworksAnswer));
  }

  async nativeBalance(caller: Caller, networkArg: string): Promise<EvmBalanceView> {
    const network = checkEvmNetwork(networkArg);
    const answer = await this.get(caller, 'evm.balance', 'evmBalance', { network }, EvmBalanceAnswer);
    if (answer.value.data.token !== null) throw answer.unreadable('/data/token');
    return balanceOf(answer, answer.value.data, network, '/data');
  }

  async tokenBalance(caller: Caller, networkArg: string, tokenArg: string): Promise<EvmBalanceView> {
    const network = checkEvmNetwork(networkArg);
    const token = tokenSymbol(tokenArg);
    const answer = await this.get(caller, 'evm.tokenBalance', 'evmTokenBalance', { network, token }, EvmBalanceAnswer);
    if (answer.value.data.token === null) throw answer.unreadable('/data/token');
    return balanceOf(answer, answer.value.data, network, '/data');
  }

  async portfolio(caller: Caller, networkArg: string): Promise<EvmPortfolioView> {
    const network = checkEvmNetwork(networkArg);
    return portfolioOf(
      await this.get(caller, 'evm.portfolio', 'evmPortfolio', { network }, EvmPortfolioAnswer),
      network,
    );
  }

  /** This gateway's body: `to` and `amount` (token units, as the caller wrote them). */
  sendNative(
    caller: Caller,
    networkArg: string,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView> {
    const network = checkEvmNetwork(networkArg);
    return this.send(
      caller,
      'evm.sendNative',
      'sendEvmNative',
      network,
      { to: input.to, amount: input.amount },
      idempotencyKey,
    );
  }

  /** This gateway's body: `token` (its symbol), `to` and `amount`. */
  sendToken(
    caller: Caller,
    networkArg: string,
    tokenArg: string,
    input: EvmSendInput,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView> {
    const network = checkEvmNetwork(networkArg);
    const body = { token: tokenSymbol(tokenArg), to: input.to, amount: input.amount };
    return this.send(caller, 'evm.sendToken', 'sendEvmToken', network, body, idempotencyKey);
  }

  /** A read where the route map places `operation`, asked with the caller's credential. */
  private get<S extends AnswerShape<unknown>>(
    caller: Caller,
    operation: NamedOperation,
    field: string,
    params: Record<string, string>,
    shape: S,
  ) {
    const route = placedRoute(this.routes, operation, field, params);
    return askUpstream(this.upstream, { ...route, credential: credentialOf(caller) }, shape);
  }

  private send(
    caller: Caller,
    operation: 'evm.sendNative' | 'evm.sendToken',
    field: string,
    network: EvmNetwork,
    body: Record<string, unknown>,
    idempotencyKey: string | undefined,
  ): Promise<EvmSendView> {
    // Built before anything is recorded: a request the facade refuses itself holds no key.
    const route = placedRoute(this.routes, operation, field, { network });
    const credential = credentialOf(caller);
    const kind = operation === 'evm.sendNative' ? 'native' : 'token';
    const send = async (key: string | undefined) => {
      const answer = await askUpstream(
        this.upstream,
        { ...route, credential, body, idempotencyKey: key },
        EvmTransferAnswer,
      );
      return transferOf(answer, { network, kind });
    };
    if (!this.keys) return send(idempotencyKey);
    return this.keys.run(caller, { operation, key: idempotencyKey, input: { network, ...body }, send });
  }
}

/**
 * A token's symbol, refused before anything is sent when it could not be one (it goes in a path);
 * in capitals, as the upstream takes it in any case: `usdc` and `USDC` are one read and one key's input.
 */
function tokenSymbol(value: string): string {
  if (!TOKEN_SYMBOL.test(value)) throw badInput('token', 'token must be a token symbol, like USDC.');
  return value.toUpperCase();
}
