/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query MyProfile { me { id firstName email } }\n": typeof types.MyProfileDocument,
    "\n  query MyBalance { walletBalance { currency available held } }\n": typeof types.MyBalanceDocument,
    "\n  mutation FundInSandbox($amount: Float!) {\n    simulateVirtualAccountTransfer(amount: $amount) { reference status amount }\n  }\n": typeof types.FundInSandboxDocument,
    "\n  mutation PayAirtime($input: AirtimeInput!) {\n    buyAirtime(input: $input) { reference status amount fee billerName }\n  }\n": typeof types.PayAirtimeDocument,
    "\n  query LatestBills($limit: Int) {\n    billRecords(limit: $limit) { total bills { reference type status amount createdAt } }\n  }\n": typeof types.LatestBillsDocument,
    "\n  subscription LiveEvents($after: SafeInt, $types: [String!]) {\n    events(after: $after, types: $types) { seq type created data }\n  }\n": typeof types.LiveEventsDocument,
};
const documents: Documents = {
    "\n  query MyProfile { me { id firstName email } }\n": types.MyProfileDocument,
    "\n  query MyBalance { walletBalance { currency available held } }\n": types.MyBalanceDocument,
    "\n  mutation FundInSandbox($amount: Float!) {\n    simulateVirtualAccountTransfer(amount: $amount) { reference status amount }\n  }\n": types.FundInSandboxDocument,
    "\n  mutation PayAirtime($input: AirtimeInput!) {\n    buyAirtime(input: $input) { reference status amount fee billerName }\n  }\n": types.PayAirtimeDocument,
    "\n  query LatestBills($limit: Int) {\n    billRecords(limit: $limit) { total bills { reference type status amount createdAt } }\n  }\n": types.LatestBillsDocument,
    "\n  subscription LiveEvents($after: SafeInt, $types: [String!]) {\n    events(after: $after, types: $types) { seq type created data }\n  }\n": types.LiveEventsDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MyProfile { me { id firstName email } }\n"): (typeof documents)["\n  query MyProfile { me { id firstName email } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MyBalance { walletBalance { currency available held } }\n"): (typeof documents)["\n  query MyBalance { walletBalance { currency available held } }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FundInSandbox($amount: Float!) {\n    simulateVirtualAccountTransfer(amount: $amount) { reference status amount }\n  }\n"): (typeof documents)["\n  mutation FundInSandbox($amount: Float!) {\n    simulateVirtualAccountTransfer(amount: $amount) { reference status amount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PayAirtime($input: AirtimeInput!) {\n    buyAirtime(input: $input) { reference status amount fee billerName }\n  }\n"): (typeof documents)["\n  mutation PayAirtime($input: AirtimeInput!) {\n    buyAirtime(input: $input) { reference status amount fee billerName }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query LatestBills($limit: Int) {\n    billRecords(limit: $limit) { total bills { reference type status amount createdAt } }\n  }\n"): (typeof documents)["\n  query LatestBills($limit: Int) {\n    billRecords(limit: $limit) { total bills { reference type status amount createdAt } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription LiveEvents($after: SafeInt, $types: [String!]) {\n    events(after: $after, types: $types) { seq type created data }\n  }\n"): (typeof documents)["\n  subscription LiveEvents($after: SafeInt, $types: [String!]) {\n    events(after: $after, types: $types) { seq type created data }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;