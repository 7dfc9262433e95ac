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
