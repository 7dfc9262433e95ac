/**
 * At most `perWallet` of one wallet's payout commits in flight in this process at once; the others
 * wait here, holding nothing. One wallet's holding transactions take turns on its account rows
 * anyway (a posting locks them until its commit), so letting more in only parks them in the
 * database: each waits on the row lock with a pooled connection checked out, and a burst of
 * payouts from one wallet filled the request pool with such waiters while every other request
 * waited for a connection behind them. Two in flight keep the wallet's turns going back to back:
 * one holds the rows while the next does its statements up to them.
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
