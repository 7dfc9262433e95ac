import { type Idempotency, replay } from '../idempotency/idempotency.js';
import { type KeyRef, keyAnswer, keyReused } from '../money/key-claim.js';
import { readsOf } from '../../db/pool-routing.js';
import type { Database, Executor } from '../../db/client.js';
import { isUniqueViolation } from '../../db/sql-state.js';
import type { Environment } from '../auth/permissions.js';
import type { Principal } from '../auth/principal.js';
import { accountTimeOf, type Clock, type ClockFor, clockLookup } from '../clock.js';
import { OFFRAMP_ORDER, offrampEventData } from './order-lifecycle.js';
import { isLegal, transition } from '../lifecycle/transition.js';
import { DomainError, badInput, notFound } from '../errors.js';
import { checkFields, checkFieldsAwaiting, optionalText, requiredText } from '../field-checks.js';
import { recordEvent } from '../events/outbox.js';
import { moneyEvent } from '../money-event.js';
import { enqueueJob } from '../jobs/job-runner.js';
import { decimalText, multiplyDown, parseUnits } from '../money/decimal.js';
import { checkPage, paged } from '../pagination.js';
import { ReferenceCache } from '../reference-cache.js';
import { FIAT_DECIMALS, type FiatCurrency, type OfframpNetwork, type OfframpToken } from './catalogue.js';
import { type OfframpOrder, type OfframpOrderRow, toOfframpOrder } from './offramp-order.js';
import type { OfframpAsset, OfframpProvider, PayoutInstitution, ProviderOrderState } from './offramp-provider.js';
import { type OfframpOrderFilter, offrampStore } from './offramp-store.js';

export const OFFRAMP_JOBS = {
  /** Sandbox: walks a deposited order one step along its lifecycle. */
  sandboxStep: 'offramp.sandbox-step',
  /** Sandbox: an order still unpaid at `validUntil` expires. */
  expire: 'offramp.expire',
  /** Provider orders: ask the provider for the state, in case a webhook was lost. */
  reconcile: 'offramp.reconcile',
} as const;

/** Seconds between sandbox lifecycle steps after the simulated deposit. */
export const SANDBOX_STEP_SECONDS = 5;

export interface QuoteInput {
  token: OfframpToken;
  network: OfframpNetwork;
  amount: string | number;
  fiat: FiatCurrency;
}

export interface OfframpQuote {
  token: OfframpToken;
  amount: number;
  network: OfframpNetwork;
  fiat: FiatCurrency;
  rate: number;
}

export interface InitiateOrderInput extends QuoteInput {
  reference: string;
  recipient: { institution: string; accountNumber: string; accountName: string; memo?: string | null };
  refundAddress?: string | null;
}

const REFERENCE = /^[A-Za-z0-9_-]{1,64}$/;
const ACCOUNT_NUMBER = /^[0-9A-Za-z+]{4,34}$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const STARKNET_ADDRESS = /^0x[0-9a-fA-F]{1,64}$/;
const MAX_PAGE_SIZE = 100;
/** The key scope's operation of an order's opening. */
const INITIATE = 'offramp.initiate';

type Owner = { userId: string; environment: Environment };

/**
 * Crypto-to-fiat orders: quotes, payout banks, orders and their lifecycle. The provider is the
 * sandbox simulator for sandbox credentials and Paycrest for production ones; providers are called
 * outside any transaction, and each status change commits with its event.
 */
export class OfframpService {
  private readonly assetCache = new ReferenceCache(300_000);

  private readonly clockFor: ClockFor;

  constructor(
    private readonly db: Database,
    clock: Clock | ClockFor,
    private readonly idempotency: Idempotency,
    private readonly providers: { sandbox: OfframpProvider; production: OfframpProvider | undefined },
  ) {
    this.clockFor = clockLookup(clock);
  }

  providerFor(environment: Environment): OfframpProvider {
    const provider = this.providers[environment];
    if (!provider)
      throw new DomainError(
        'SERVICE_UNAVAILABLE',
        'The offramp is not configured for production (PAYCREST_API_KEY is unset).',
      );
    return provider;
  }

  /** The provider's assets, cached for five minutes per environment (they change rarely). */
  async assets(principal: Principal): Promise<OfframpAsset[]> {
    return this.assetCache.get(principal.environment, () => this.providerFor(principal.environment).assets());
  }

  async quote(principal: Principal, input: QuoteInput): Promise<OfframpQuote> {
    const { amount } = await this.checkAmount(principal, input);
    const rate = await this.providerFor(principal.environment).rate({
      token: input.token,
      network: input.network,
      amount,
      fiat: input.fiat,
    });
    return { token: input.token, amount: Number(amount), network: input.network, fiat: input.fiat, rate: Number(rate) };
  }

  async payoutBanks(principal: Principal, fiat: FiatCurrency): Promise<PayoutInstitution[]> {
    return this.providerFor(principal.environment).institutions(fiat);
  }

  async verifyAccount(
    principal: Principal,
    input: { institution: string; accountNumber: string },
  ): Promise<{ institution: string; accountNumber: string; accountName: string | null }> {
    const { accountNumber } = checkFields(verifyAccountFieldChecks(input));
    const accountName = await this.providerFor(principal.environment).verifyAccount({
      institution: input.institution.trim(),
      accountIdentifier: accountNumber,
    });
    return { institution: input.institution.trim(), accountNumber, accountName };
  }

  /**
   * Opens an order. A retry with the same Idempotency-Key and input returns the same order as it
   * stands now; the same key with other input is 422; a reference already used (without that key)
   * is 409. The key is claimed like every keyed operation's, in the transaction that records the
   * order (money/key-claim.ts), and a twin in flight is waited for, not refused: concurrent retries
   * with one key are all answered with the one order that committed.
   */
  async initiate(
    principal: Principal,
    input: InitiateOrderInput,
    idempotencyKey: string | undefined,
  ): Promise<OfframpOrder> {
    // Every field the order can be refused for before the provider is asked, checked together.
    const { reference, accountNumber, accountName, memo, refundAddress, checkedAmount } = await checkFieldsAwaiting({
      ...orderFieldChecks(input),
      checkedAmount: () => this.checkAmount(principal, input),
    });
    const { amount, asset } = checkedAmount;
    const keyed = { ...input, amount, reference, accountNumber, accountName, memo, refundAddress };
    const scope = { userId: principal.userId, environment: principal.environment, operation: INITIATE };
    const key = this.idempotency.keyRef(scope, idempotencyKey, keyed);
    const requestHash = key?.requestHash ?? this.idempotency.fingerprint(keyed);

    // A retry whose key is answered, or a reference in use, is answered before the provider is asked.
    const earlier = await this.earlierOrder(principal, reference, key);
    if (earlier) return toOfframpOrder(earlier);

    const provider = this.providerFor(principal.environment);
    const institution = (await provider.institutions(input.fiat)).find(
      (i) => i.code === input.recipient.institution.trim(),
    );
    if (!institution)
      throw badInput(
        'recipient.institution',
        `recipient.institution ${JSON.stringify(input.recipient.institution)} does not pay out ${input.fiat}; list the codes with the supported payout banks.`,
      );
    const rate = await provider.rate({ token: input.token, network: input.network, amount, fiat: input.fiat });
    const recipient = {
      institution: institution.code,
      accountIdentifier: accountNumber,
      accountName,
      memo: memo ?? `Offramp ${reference}`,
      currency: input.fiat,
    };
    const created = await provider.createOrder({
      token: input.token,
      network: input.network,
      amount,
      rate,
      recipient,
      reference,
      ...(refundAddress ? { refundAddress } : {}),
    });

    const amountRaw = parseUnits(amount, asset.decimals, 'amount');
    const clock = this.clockFor(principal);
    const now = clock.now();
    // The provider's window is read on the process clock; the account's order and jobs are on its own.
    const validUntil = accountTimeOf(clock, created.validUntil);
    let recorded: OfframpOrder | undefined;
    try {
      const answered = await this.idempotency.transaction<OfframpOrder>(
        scope,
        idempotencyKey,
        keyed,
        async (tx) => {
          const row = await offrampStore.insert(tx, {
            userId: principal.userId,
            environment: principal.environment,
            reference,
            provider: provider.name,
            providerOrderId: created.providerOrderId,
            token: input.token,
            network: input.network,
            decimals: asset.decimals,
            amountRaw,
            senderFeeRaw: parseUnits(created.senderFee, asset.decimals, 'senderFee'),
            transactionFeeRaw: parseUnits(created.transactionFee, asset.decimals, 'transactionFee'),
            rate,
            fiat: input.fiat,
            fiatAmountMinor: multiplyDown(amountRaw, asset.decimals, rate, FIAT_DECIMALS),
            receiveAddress: created.receiveAddress,
            validUntil,
            institutionCode: institution.code,
            bankName: institution.name,
            accountNumber,
            accountName,
            memo,
            refundAddress,
            idempotencyKey: idempotencyKey ?? null,
            requestHash,
            createdAt: now,
            updatedAt: now,
          });
          await recordEvent(tx, moneyEvent('offramp.initiated', principal, offrampEventData(row)), now);
          // The sandbox expires unpaid orders itself; a provider's orders are checked against the
          // provider a minute after their window, in case its webhook never arrives.
          await enqueueJob(
            tx,
            provider.orderState
              ? {
                  kind: OFFRAMP_JOBS.reconcile,
                  payload: { orderId: row.id },
                  runAt: new Date(validUntil.getTime() + 60_000),
                  tenant: row.userId,
                  clock,
                }
              : {
                  kind: OFFRAMP_JOBS.expire,
                  payload: { orderId: row.id },
                  runAt: validUntil,
                  tenant: row.userId,
                  clock,
                },
          );
          recorded = toOfframpOrder(row);
          return recorded;
        },
        { waitForTwin: true },
      );
      // Replayed (a twin with this key committed first): its order, as it stands now.
      return answered.id === recorded?.id ? answered : await this.current(answered.id);
    } catch (error) {
      // A concurrent request without this key took the reference: refused naming its order.
      if (isUniqueViolation(error)) {
        const winner = await this.earlierOrder(principal, reference, key);
        if (winner) return toOfframpOrder(winner);
      }
      throw error;
    }
  }

  /** An order as it stands now, for a key answered with it. */
  private async current(orderId: string): Promise<OfframpOrder> {
    const row = await offrampStore.findById(this.db, orderId);
    if (!row) throw notFound('Offramp order');
    return toOfframpOrder(row);
  }

  async track(principal: Principal, reference: string): Promise<OfframpOrder> {
    const row = await offrampStore.findByReference(this.db, principal, reference);
    if (!row) throw notFound(`Offramp order ${JSON.stringify(reference)}`);
    return toOfframpOrder(row);
  }

  async history(principal: Principal, filter: OfframpOrderFilter, page = 1, limit = 20) {
    checkPage(page, limit, MAX_PAGE_SIZE);
    if (filter.from && filter.to && filter.from >= filter.to) throw badInput('to', 'to must be after from.');
    const { rows, total } = await offrampStore.page(readsOf(this.db), principal, filter, page, limit);
    return paged('orders', rows.map(toOfframpOrder), total, page, limit);
  }

  /** Sandbox only: the sender's deposit arrives, and the lifecycle starts walking on jobs. */
  async simulateDeposit(principal: Principal, reference: string, idempotencyKey?: string): Promise<OfframpOrder> {
    // Only a provider with simulated senders (the sandbox's) can simulate a deposit.
    const simulatedHash = this.providerFor(principal.environment).simulatedDepositHash;
    if (!simulatedHash)
      throw badInput(
        'reference',
        'Deposits can be simulated only in sandbox; in production the sender pays into receiveAddress.',
      );
    const scope = {
      userId: principal.userId,
      environment: principal.environment,
      operation: 'offramp.simulate-deposit',
    };
    return this.idempotency.run(scope, idempotencyKey, { reference }, async (claim) => {
      const row = await offrampStore.findByReference(this.db, principal, reference);
      if (!row) throw notFound(`Offramp order ${JSON.stringify(reference)}`);
      const moved = await this.move(
        row.id,
        { status: 'deposit_received', txHash: simulatedHash(row.id) },
        async (tx, order) => {
          const clock = this.clockFor(order);
          await enqueueJob(tx, {
            kind: OFFRAMP_JOBS.sandboxStep,
            payload: { orderId: order.id },
            tenant: order.userId,
            runAt: new Date(clock.now().getTime() + SANDBOX_STEP_SECONDS * 1000),
            clock,
          });
          // The answer to replay commits with the deposit it reports.
          await this.idempotency.finish(tx, claim, toOfframpOrder(order));
        },
      );
      if (!moved.changed) {
        throw new DomainError(
          'CONFLICT',
          `Offramp order ${JSON.stringify(reference)} is ${moved.row.status}; only an initiated order can receive its deposit.`,
        );
      }
      return toOfframpOrder(moved.row);
    });
  }

  /**
   * Moves an order to a new state if the lifecycle allows it (forward only; repeats and late
   * notices change nothing), with its event, in one transaction; `then` runs in it on a change.
   */
  async move(
    orderId: string,
    state: ProviderOrderState,
    then?: (tx: Executor, row: OfframpOrderRow) => Promise<void>,
  ): Promise<{ changed: boolean; row: OfframpOrderRow }> {
    return this.db.transaction(async (tx) => {
      const current = await offrampStore.findById(tx, orderId);
      if (!current) throw notFound('Offramp order');
      if (!isLegal(OFFRAMP_ORDER, current.status, state.status)) return { changed: false, row: current };
      const row = await transition(
        tx,
        OFFRAMP_ORDER,
        orderId,
        current.status,
        state.status,
        this.clockFor(current).now(),
        {
          ...(state.txHash ? { txHash: state.txHash } : {}),
          ...(state.reason ? { failureReason: state.reason } : {}),
        },
      );
      // Another notice moved it first: this one changes nothing (as a late notice would).
      if (!row) return { changed: false, row: (await offrampStore.findById(tx, orderId))! };
      await then?.(tx, row);
      return { changed: true, row };
    });
  }

  /** The clock an order's account runs on (a sandbox test clock's, when attached). */
  clockOf(order: Pick<OfframpOrderRow, 'userId' | 'environment'>): Clock {
    return this.clockFor(order);
  }

  async findOrder(id: string): Promise<OfframpOrderRow | undefined> {
    return offrampStore.findById(this.db, id);
  }

  async findByProviderOrder(provider: string, providerOrderId: string): Promise<OfframpOrderRow | undefined> {
    return offrampStore.findByProviderOrder(this.db, provider, providerOrderId);
  }

  /**
   * The order a request is answered with before anything is created: the one its key was answered
   * with (as it stands now), or 422 for the key with other input; else a reference in use is 409,
   * naming its order. An order made with this key before keys were claimed in `idempotency_keys`
   * holds it in its own column only: with the same input it is still this request's order.
   */
  private async earlierOrder(owner: Owner, reference: string, key: KeyRef | undefined) {
    const answered = key ? await keyAnswer(this.db, key) : undefined;
    if (answered) return offrampStore.findById(this.db, replay<OfframpOrder>(answered).id);
    const sameReference = await offrampStore.findByReference(this.db, owner, reference);
    if (!sameReference) return undefined;
    if (key && sameReference.idempotencyKey === key.key) {
      if (sameReference.requestHash !== key.requestHash) throw keyReused();
      return sameReference;
    }
    throw new DomainError(
      'CONFLICT',
      `reference ${JSON.stringify(reference)} is already used by offramp order ${sameReference.id} (${sameReference.status}). Use a new reference, or send the first request's Idempotency-Key to retry it.`,
      { field: 'reference' },
    );
  }

  /** The asset of the input's token on its network, refused naming `network` when none carries it. */
  private async assetFor(principal: Principal, input: QuoteInput): Promise<OfframpAsset> {
    const assets = await this.assets(principal);
    const asset = assets.find((a) => a.token === input.token && a.network === input.network);
    if (asset) return asset;
    const networks = assets.filter((a) => a.token === input.token).map((a) => a.network);
    throw badInput(
      'network',
      `network ${input.network} does not carry ${input.token} here.${networks.length ? ` Networks for ${input.token}: ${networks.join(', ')}.` : ''}`,
    );
  }

  private async checkAmount(principal: Principal, input: QuoteInput): Promise<{ amount: string; asset: OfframpAsset }> {
    const { amount, asset } = await checkFieldsAwaiting({
      amount: () => decimalText(input.amount, 'amount'),
      asset: () => this.assetFor(principal, input),
    });
    if (parseUnits(amount, asset.decimals, 'amount') <= 0n) throw badInput('amount', 'amount must be greater than 0.');
    return { amount, asset };
  }
}

function checkAccountNumber(value: string, field: string): string {
  const accountNumber = value.trim();
  if (!ACCOUNT_NUMBER.test(accountNumber))
    throw badInput(field, `${field} must be 4 to 34 letters or digits (a bank account or mobile money number).`);
  return accountNumber;
}

function orderReference(given: string): string {
  const reference = given.trim();
  if (!REFERENCE.test(reference)) throw badInput('reference', 'reference must be 1 to 64 letters, digits, "-" or "_".');
  return reference;
}

function recipientName(given: string): string {
  const accountName = given.trim();
  if (!accountName || accountName.length > 100)
    throw badInput('recipient.accountName', 'recipient.accountName is required (at most 100 characters).');
  return accountName;
}

function refundAddressFor(network: string, given: string | null | undefined): string | null {
  const refundAddress = given?.trim() || null;
  if (refundAddress && !(network === 'starknet' ? STARKNET_ADDRESS : EVM_ADDRESS).test(refundAddress))
    throw badInput('refundAddress', `refundAddress must be a ${network} address (0x…).`);
  return refundAddress;
}

/** An account check's own rules for its fields: the service runs them, and REST beside its schema. */
export const verifyAccountFieldChecks = (input: { institution: string; accountNumber: string }) => ({
  accountNumber: () => checkAccountNumber(input.accountNumber, 'accountNumber'),
  institution: () =>
    requiredText(input.institution, 'institution', 'institution is required: a code from the supported payout banks.'),
});

/** An order's own rules for its fields, without a lookup (the amount needs the asset's decimals). */
export const orderFieldChecks = (
  input: Pick<InitiateOrderInput, 'reference' | 'recipient' | 'network' | 'refundAddress'>,
) => ({
  reference: () => orderReference(input.reference),
  accountNumber: () => checkAccountNumber(input.recipient.accountNumber, 'recipient.accountNumber'),
  accountName: () => recipientName(input.recipient.accountName),
  memo: () => optionalText(input.recipient.memo, 'recipient.memo', 140),
  refundAddress: () => refundAddressFor(input.network, input.refundAddress),
});
