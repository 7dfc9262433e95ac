/** A user as the domain knows it: plain data, safe to hand to GraphQL (no hashes). */
export interface User {
  id: string;
  createdAt: Date;
  updatedAt: Date;
  deletedDate: Date | null;
  email: string;
  phone: string | null;
  firstName: string | null;
  lastName: string | null;
  haveTransactionPin: boolean;
  verified: boolean;
  dob: string | null;
  isAdmin: boolean;
  deviceId: string | null;
  deviceIp: string | null;
  deviceModel: string | null;
  platform: string | null;
  lastLoggedIn: Date | null;
  /** The display name as an upstream REST v1 deployment gave it (facade mode); absent: `displayName`. */
  name?: string;
}

export interface Business {
  id: string;
  ownerUserId: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewUser {
  email: string;
  phone?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  dob?: string | undefined;
  verified?: boolean | undefined;
  isAdmin?: boolean | undefined;
  /** argon2id of the password, for users who sign up themselves. */
  passwordHash?: string | undefined;
}

export function displayName({ firstName, lastName }: Pick<User, 'firstName' | 'lastName'>): string {
  // Resolved for every user a query reads: no array, filter and join per call.
  if (firstName && lastName) return `${firstName} ${lastName}`;
  return firstName || lastName || '';
}
