/**
 * A partner app's home screen in one request: the user, the NGN balance, the last ten movements
 * with what each one was, pending bills, the crypto portfolio and open offramp orders. The
 * explorer opens it as a tab; docs/graphql.md shows it; a test holds its SQL statement count.
 */
export const HOME_SCREEN = /* GraphQL */ `
  query HomeScreen($transactions: Int = 10) {
    me {
      id
      name
      wallet {
        available
        availableKobo
      }
      transactions(first: $transactions) {
        totalCount
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          kind
          status
          reference
          createdAt
          record {
            __typename
            ... on Deposit {
              amount
              method
              depositStatus: status
            }
            ... on BillRecord {
              amount
              billerName
              customer
              billStatus: status
            }
            ... on Payout {
              amount
              bankName
              payoutStatus: status
            }
            ... on WalletTransaction {
              type
              amount
              counterparty
            }
            ... on SolanaTransfer {
              kind
              tokenAmount: amount
              mint
              quote {
                quoteId
                toToken {
                  symbol
                }
              }
            }
            ... on OfframpOrder {
              tokenAmount: amount
              token
              fiatAmount
              orderStatus: status
            }
          }
        }
      }
      pendingBills: billRecords(status: PENDING, first: 10) {
        nodes {
          reference
          amount
          billerName
        }
      }
      solanaWallet {
        address
        portfolio {
          totalUsdValue
          sol {
            amount
          }
          tokens {
            symbol
            amount
          }
        }
      }
      openOfframpOrders: offrampOrders(open: true, first: 10) {
        nodes {
          reference
          status
          amountToSend
          receiveAddress
          validUntil
        }
      }
    }
  }
`;

/**
 * The home screen as a facade serves it (docs/facade.md): what of HOME_SCREEN its graph holds. The
 * user, the last movements (the partner's events), the pending bills and the latest bills, and the
 * Solana address; `$items` sets every list's length. Its upstream calls do not grow with `$items`
 * (test/facade/home-screen-calls.test.ts): the lists are one upstream page each, and nothing under
 * them asks the upstream.
 */
export const FACADE_HOME_SCREEN = /* GraphQL */ `
  query FacadeHomeScreen($items: Int = 10) {
    me {
      id
      name
      email
    }
    events(first: $items) {
      events {
        id
        type
        created
      }
      hasMore
    }
    pendingBills: billRecords(filter: { status: PENDING }, limit: $items) {
      total
      bills {
        reference
        amount
        billerName
        status
        updatedAt
      }
    }
    latestBills: billRecords(limit: $items) {
      total
      bills {
        reference
        amount
        type
        customer
        createdAt
        updatedAt
      }
    }
    solanaWallet {
      address
    }
  }
`;
