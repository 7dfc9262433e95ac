/**
 * At most `perWallet` of one wallet's pieces of work in flight in this process at once (a payout's
 * reads before its open); the others wait here, holding nothing. A burst of one wallet's payouts
 * would otherwise check out every pooled connection at once while every other request waited
 * behind them. Their writes take turns in the wallet's group commit (money/group-commit.ts).
 */
export class WalletTurns {
  /** Per wallet: writes in flight, and those waiting, the first `ahead` of them settles. */
  private readonly wallets = new Map<string, { inFlight: number; waiting: Array<() => void>; ahead: number }>();

  constructor(private readonly perWallet = 2) {}

  /**
   * Runs `write` in one of the wallet's turns. `ahead`: it finishes an operation already begun (a
   * settle after its provider answered), so it goes before the writes that would begin new ones,
   * and a burst's first payouts are answered while its last ones are still being opened.
   */
  async run<T>(wallet: string, write: () => Promise<T>, options: { ahead?: boolean } = {}): Promise<T> {
    await this.enter(wallet, options.ahead ?? false);
    try {
      return await write();
    } finally {
      this.leave(wallet);
    }
  }

  private enter(wallet: string, ahead: boolean): Promise<void> {
    const turns = this.wallets.get(wallet);
    if (!turns) {
      this.wallets.set(wallet, { inFlight: 1, waiting: [], ahead: 0 });
      return Promise.resolve();
    }
    if (turns.inFlight < this.perWallet) {
      turns.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      if (!ahead) turns.waiting.push(resolve);
      else turns.waiting.splice(turns.ahead++, 0, resolve);
    });
  }

  /** A turn given back passes to the first waiter; a wallet with nothing in flight is forgotten. */
  private leave(wallet: string): void {
    const turns = this.wallets.get(wallet)!;
    const next = turns.waiting.shift();
    if (turns.ahead > 0) turns.ahead--;
    if (next) next();
    else if (--turns.inFlight === 0) this.wallets.delete(wallet);
  }
}
