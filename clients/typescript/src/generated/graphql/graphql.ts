/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** An airtime top-up. */
export type AirtimeInput = {
  /** In naira, more than 0, at most two decimals. */
  amount: number;
  /** The beneficiary's name (at most 60 characters). */
  beneficiaryName?: string | null | undefined;
  /** MTN, AIRTEL, GLO, 9MOBILE or a biller code. */
  biller: string;
  /** Pay at scheduleData's time instead of now. */
  isSchedule?: boolean | null | undefined;
  /** The phone number to top up. */
  phoneNumber: string;
  /** Your reference: 1-64 letters, digits, ".", ":", "-" or "_"; generated when left out. */
  reference?: string | null | undefined;
  /** Saves the customer as a beneficiary. */
  saveBeneficiary?: boolean | null | undefined;
  /** Required with isSchedule. */
  scheduleData?: ScheduleDataInput | null | undefined;
};

/** Where a bill payment stands. */
export type BillStatus =
  /** Not paid: the hold was released (failureReason says why). */
  | 'FAILED'
  /** Not settled yet: with the biller (amount + fee held), or waiting for its scheduled run. */
  | 'PENDING'
  /** Paid: the hold was captured. */
  | 'SUCCESS';

/** The categories of bill. */
export type BillType =
  /** Mobile airtime top-up. */
  | 'AIRTIME'
  /** Cable TV subscriptions (DSTV, GOTV, StarTimes). */
  | 'CABLEBILLS'
  /** Mobile data bundles. */
  | 'MOBILEDATA'
  /** Electricity (prepaid and postpaid meters). */
  | 'UTILITYBILLS';

/** Where a deposit stands. */
export type DepositStatus =
  /** The money arrived and the wallet was credited. */
  | 'COMPLETED'
  /** Declined, abandoned or expired; the wallet was not credited (failureReason says why). */
  | 'FAILED'
  /** Recorded; the provider has not answered yet. */
  | 'INITIATED'
  /** Waiting for the payer: a PIN, OTP, redirect or transfer (see nextAction). */
  | 'PENDING';

/** When a scheduled bill payment runs. */
export type ScheduleDataInput = {
  /** When to run (the first run of a recurring schedule). */
  executionDate: string;
  /** Runs again by recurrencePattern after the first run. */
  isRecurring?: boolean | null | undefined;
  /** daily, weekly or monthly (Africa/Lagos time). */
  recurrencePattern?: string | null | undefined;
};

export type MyProfileQueryVariables = Exact<{ [key: string]: never; }>;


export type MyProfileQuery = { me: { id: string, firstName: string | null, email: string } };

export type MyBalanceQueryVariables = Exact<{ [key: string]: never; }>;


export type MyBalanceQuery = { walletBalance: { currency: string, available: number, held: number } };

export type FundInSandboxMutationVariables = Exact<{
  amount: number;
}>;


export type FundInSandboxMutation = { simulateVirtualAccountTransfer: { reference: string, status: DepositStatus, amount: number } };

export type PayAirtimeMutationVariables = Exact<{
  input: AirtimeInput;
}>;


export type PayAirtimeMutation = { buyAirtime: { reference: string, status: BillStatus, amount: number, fee: number, billerName: string } };

export type LatestBillsQueryVariables = Exact<{
  limit?: number | null | undefined;
}>;


export type LatestBillsQuery = { billRecords: { total: number, bills: Array<{ reference: string, type: BillType, status: BillStatus, amount: number, createdAt: string }> } };

export type LiveEventsSubscriptionVariables = Exact<{
  after?: number | null | undefined;
  types?: Array<string> | string | null | undefined;
}>;


export type LiveEventsSubscription = { events: { seq: number, type: string, created: number, data: unknown } };


export const MyProfileDocument = {"__meta__":{"hash":"sha256:8c83363c25737b712001503ca6b50a24433e3a5d3681eb148bbaf75f14241a0c"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"MyProfile"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"firstName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}}]}}]}}]} as unknown as DocumentNode<MyProfileQuery, MyProfileQueryVariables>;
export const MyBalanceDocument = {"__meta__":{"hash":"sha256:cbc26a9c40aad483b065ea7f13053dc14bc656230a6f07871f539978320a1400"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"MyBalance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"walletBalance"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"available"}},{"kind":"Field","name":{"kind":"Name","value":"held"}}]}}]}}]} as unknown as DocumentNode<MyBalanceQuery, MyBalanceQueryVariables>;
export const FundInSandboxDocument = {"__meta__":{"hash":"sha256:6bb45abbf3532ed702d068e791cdcedba6073cb703d07d502d09844deb874a29"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"FundInSandbox"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"amount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"simulateVirtualAccountTransfer"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"amount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"amount"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reference"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<FundInSandboxMutation, FundInSandboxMutationVariables>;
export const PayAirtimeDocument = {"__meta__":{"hash":"sha256:96834041da02ea601e9fc2518208c55431b2d7ee7415160190ee92fe086e9c5a"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"PayAirtime"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AirtimeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"buyAirtime"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reference"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"fee"}},{"kind":"Field","name":{"kind":"Name","value":"billerName"}}]}}]}}]} as unknown as DocumentNode<PayAirtimeMutation, PayAirtimeMutationVariables>;
export const LatestBillsDocument = {"__meta__":{"hash":"sha256:31f7933bb9dfa51850f510510a0563b0dafc5bf7bfd733f3d7a6329f72fc446d"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"LatestBills"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"billRecords"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"bills"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"reference"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]}}]} as unknown as DocumentNode<LatestBillsQuery, LatestBillsQueryVariables>;
export const LiveEventsDocument = {"__meta__":{"hash":"sha256:7c7482c8c0a374e106054daf5f72ace5513899942131322c35ca555bf4ba976e"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"LiveEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"SafeInt"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"types"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"events"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"types"},"value":{"kind":"Variable","name":{"kind":"Name","value":"types"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"seq"}},{"kind":"Field","name":{"kind":"Name","value":"type"}},{"kind":"Field","name":{"kind":"Name","value":"created"}},{"kind":"Field","name":{"kind":"Name","value":"data"}}]}}]}}]} as unknown as DocumentNode<LiveEventsSubscription, LiveEventsSubscriptionVariables>;