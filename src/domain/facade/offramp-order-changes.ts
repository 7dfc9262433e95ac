import { type Static, Type } from '@sinclair/typebox';
import { EVENT_OF_STATUS, OFFRAMP_STATUSES } from '../offramp/catalogue.js';
import { answerShape, NumberAmount, Timestamp } from '../upstream/answer-shape.js';
import type { Caller } from '../users/user-directory.js';
import { gapFillId } from './bill-record-changes.js';
import type { ChangeSource } from './gap-fill.js';
import type { InboundEnvelope } from './inbound-envelope.js';
import type { RestV1Upstream } from './rest-v1-upstream.js';
import { askUpstream, credentialOf } from './upstream-json.js';
import type { UpstreamRoute } from './upstream-routes.js';

const PAGE_SIZE = 100;
const MAX_PAGES = 50;

/** The fields of an order the job reads (this gateway's offramp order, as its REST gives it); others may come. */
const Order = Type.Object({
  reference: Type.String({ minLength: 1 }),
  status: Type.Union(OFFRAMP_STATUSES.map((s) => Type.Literal(s))),
  token: Type.String(),
  network: Type.String(),
  amount: Type.String(),
  fiat: Type.String(),
  fiatAmount: NumberAmount,
  recipient: Type.Object({ bankName: Type.String(), accountNumber: Type.String() }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const OrdersAnswer = answerShape(
  Type.Object({ data: Type.Object({ orders: Type.Array(Order), hasNext: Type.Boolean() }) }),
);

/**
 * The offramp orders list where the route map places it (`offramp.orders`: this gateway's
 * `GET /api/v1/offramp/ledger/transactions`, newest created first; the spec only names "transaction
 * history") as a source of the gap-filling job: each order created in the window implies the event
 * of its current status, with the spec's offramp `data` (`reference`, `status`, `amount`, `token`,
 * `network`, `fiatAmount`, `fiatCurrency`, `bankName`, `accountNumber`) read from the order. The
 * steps between two runs are not listed upstream, so only the status the order is in is found.
 */
export class OfframpOrderChanges implements ChangeSource {
  readonly name = 'offramp orders';

  constructor(
    private readonly upstream: RestV1Upstream,
    private readonly route: UpstreamRoute,
    private readonly now: () => Date,
  ) {}

  async changes(caller: Caller, since: Date, signal: AbortSignal): Promise<InboundEnvelope[]> {
    const found: InboundEnvelope[] = [];
    for (let page = 1; page <= MAX_PAGES && !signal.aborted; page++) {
      const answer = await askUpstream(
        this.upstream,
        {
          method: this.route.method,
          path: `${this.route.path}?page=${page}&limit=${PAGE_SIZE}`,
          credential: credentialOf(caller),
        },
        OrdersAnswer,
      );
      const { orders, hasNext } = answer.value.data;
      for (const [i, order] of orders.entries()) {
        if (new Date(order.createdAt) < since) return found;
        const fiatAmount = Number(answer.numberText(`/data/orders/${i}/fiatAmount`) ?? order.fiatAmount);
        found.push(this.eventOf(order, fiatAmount, since));
      }
      if (!hasNext) break;
    }
    return found;
  }

  private eventOf(order: Static<typeof Order>, fiatAmount: number, since: Date): InboundEnvelope {
    const kind = EVENT_OF_STATUS[order.status];
    const changed = new Date(order.updatedAt).getTime();
    return {
      id: gapFillId(kind, order.reference),
      type: kind,
      created: new Date(Math.max(since.getTime(), Math.min(changed, this.now().getTime()))),
      data: {
        reference: order.reference,
        status: order.status,
        amount: order.amount,
        token: order.token,
        network: order.network,
        fiatAmount,
        fiatCurrency: order.fiat,
        bankName: order.recipient.bankName,
        accountNumber: order.recipient.accountNumber,
      },
    };
  }
}
