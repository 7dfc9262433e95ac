import type { Executor } from '../../db/client.js';
import { runIn, statement } from '../../db/plain-sql.js';
import type { Environment } from '../auth/permissions.js';

/**
 * Takes the next nonce of an address on a network, in the transaction that stores the send signed
 * with it (under the wallet's row lock, so one address's nonces are taken one at a time). Never
 * below the chain's transaction count read before (a wallet older than this table starts there);
 * never moved back: a rolled-back transaction takes nothing, a committed one owns its nonce.
 */
const TAKE = statement(
  'evm_nonce_take_v1',
  `insert into evm_nonces (environment, network, address, next, updated_at)
   values ($1::environment, $2::text, $3::text, $4::bigint + 1, now())
   on conflict (environment, network, address) do update
     set next = greatest(evm_nonces.next, $4::bigint) + 1, updated_at = now()
   returning (next - 1)::text as nonce`,
);

export async function takeNonce(
  tx: Executor,
  place: { environment: Environment; network: string; address: string },
  chainCount: bigint,
): Promise<bigint> {
  const [row] = await runIn<{ nonce: string }>(tx, TAKE, [
    place.environment,
    place.network,
    place.address,
    chainCount.toString(),
  ]);
  return BigInt(row!.nonce);
}
